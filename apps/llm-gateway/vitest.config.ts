import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // e2e tests spawn the built gateway and fake upstreams: generous bounds on a busy 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
