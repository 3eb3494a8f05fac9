import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // Tests start a throwaway PostgreSQL (~1 s on an idle machine, several seconds on a busy
    // 2-core one): vitest's default 5 s would fail them for the machine's load, not the code.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
