// Runs @portkey-ai/gateway 1.15.2's prebuilt Node server bound to 127.0.0.1.
//
// Its start-server.js calls `@hono/node-server`'s serve({ port }) without a
// hostname, which listens on every interface. The benchmark must stay on
// loopback, so before loading it we make any `listen(port)` call that names no
// host listen on 127.0.0.1. Nothing else about Portkey is changed.
//
// Usage: node bench/lib/portkey-loopback.mjs --port=N --headless
import net from 'node:net';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const originalListen = net.Server.prototype.listen;
net.Server.prototype.listen = function listenOnLoopback(...args) {
  if (typeof args[0] === 'number' && (args[1] === undefined || typeof args[1] === 'function')) {
    // listen(port[, callback]) or listen(port, undefined, callback)
    const callback = typeof args[1] === 'function' ? args[1] : args[2];
    return originalListen.call(this, args[0], '127.0.0.1', callback);
  }
  return originalListen.apply(this, args);
};

// Portkey 1.15.2 with the @hono/node-server its semver range installs (1.19.x)
// fails every streaming chat completion with `TypeError: immutable`: it appends
// its x-portkey-* headers to the upstream fetch() response, whose headers carry
// the immutable guard (Portkey-AI/gateway#1389, #1550). To measure streaming at
// all, a streamed upstream response gets a mutable copy of its headers (one
// small Headers object per streamed request, a cost charged to Portkey). The
// body and everything else are untouched; non-streaming responses too.
// (Checked: Portkey's ~29 ms streaming first byte on the benchmark machine is
// spent after its upstream fetch resolves, with or without this shim.)
// Its `/v1/embeddings` passes the upstream response through the same way and
// fails alike (every embeddings request answers 500), so an embeddings
// response gets the same copy.
const originalFetch = globalThis.fetch;
const isEmbeddings = (input) => String(typeof input === 'object' && input !== null && 'url' in input ? input.url : input).endsWith('/embeddings');
globalThis.fetch = async function fetchWithMutableStreamHeaders(...args) {
  const response = await originalFetch(...args);
  if (response.headers.get('content-type')?.includes('text/event-stream') || isEmbeddings(args[0])) {
    Object.defineProperty(response, 'headers', { value: new Headers(response.headers) });
  }
  return response;
};

const require = createRequire(import.meta.url);
const packageJson = require.resolve('@portkey-ai/gateway/package.json');
const entry = new URL('build/start-server.js', pathToFileURL(packageJson));
await import(entry.href);
