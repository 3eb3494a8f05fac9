/**
 * Builds the dashboard to static files for the gateway to serve under /ui/:
 * hashed asset names (cached for a year by the gateway), no inline script or
 * style in index.html (the gateway's Content-Security-Policy allows neither),
 * no source maps shipped.
 */
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/ui/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    // Nothing inlined as a data: URL: every asset is a file the gateway serves.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
  },
});
