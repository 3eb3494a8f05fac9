import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // The lint-gate test spawns ESLint and the validator: generous on a busy 2-core machine.
    testTimeout: 240_000,
  },
});
