// Diagnosis only (bench memory section): loaded into a gateway started with
// `node --expose-gc --require bench/lib/gc-on-signal.cjs`, a SIGUSR2 runs a
// full garbage collection, so the benchmark can tell memory the gateway still
// holds from garbage V8 has not collected yet. Nothing else changes.
'use strict';
process.on('SIGUSR2', () => {
  if (typeof global.gc === 'function') global.gc();
});
