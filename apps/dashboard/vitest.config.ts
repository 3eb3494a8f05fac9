import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['e2e/**/*.e2e.test.ts'],
    // One headless Chromium per file, one file at a time: two browsers at once on a
    // 2-core machine only make both slower.
    fileParallelism: false,
    // Pages poll every 5 s; a live change is waited for up to ~15 s on a busy machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
