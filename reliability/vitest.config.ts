/**
 * The reliability suite (`pnpm test:reliability`): fault matrix, load with
 * faults, reload under load, client abort, bad input, secrets, brute force
 * on the API keys — against the BUILT gateway as a process. Files run one
 * after another (each spawns a gateway and loads the machine);
 * RELIABILITY_PROFILE=full for the long run.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: fileURLToPath(new URL('.', import.meta.url)),
    include: ['**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 60_000,
    // A hang anywhere must fail the run, not stall CI.
    teardownTimeout: 20_000,
  },
});
