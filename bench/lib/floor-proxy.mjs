// The floor: the least a Node reverse proxy can do for one chat completion (or
// embeddings request: the path is passed on as received) —
// node:http server, body read, one undici keep-alive Pool request (the same
// client library and version our router uses), response relayed chunk by
// chunk. No routing, validation, auth, logging or metrics. What our gateway
// adds above this is the price of its features; what this adds above direct
// is the price of a Node hop on this machine.
//
// Run as a child process: sends {ready:true, port} over IPC. Upstream base URL
// in BENCH_FLOOR_UPSTREAM (e.g. http://127.0.0.1:PORT).
import http from 'node:http';
import { createRequire } from 'node:module';

// undici is a dependency of the gateway app, not of the repo root.
const require = createRequire(new URL('../../apps/llm-gateway/package.json', import.meta.url));
const { Pool } = require('undici');

const pool = new Pool(process.env.BENCH_FLOOR_UPSTREAM, { keepAliveTimeout: 30_000 });

const server = http.createServer({ keepAliveTimeout: 5_000, noDelay: true }, (req, res) => {
  const parts = [];
  req.on('data', (part) => parts.push(part));
  req.on('end', async () => {
    try {
      const upstream = await pool.request({
        path: req.url,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' },
        body: parts.length === 1 ? parts[0] : Buffer.concat(parts),
      });
      res.writeHead(upstream.statusCode, { 'content-type': upstream.headers['content-type'] });
      for await (const chunk of upstream.body) res.write(chunk);
      res.end();
    } catch {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    }
  });
});
server.listen(0, '127.0.0.1', () => process.send?.({ ready: true, port: server.address().port }));
process.on('disconnect', () => process.exit(0));
// An orderly exit on SIGTERM, so that `node --cpu-prof` (bench/profile.mjs --target=floor) writes its profile.
process.on('SIGTERM', () => process.exit(0));
