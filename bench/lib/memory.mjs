// Memory: RSS of a gateway idle, with N concurrent open streams, and after they
// end. The upstream holds each stream open (a chunk a second) until released.
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { postChat } from './http-client.mjs';
import { rssMb, waitFor } from './procs.mjs';

/** Opens `count` streaming requests at once; resolves when all have their first byte. */
async function openStreams(client, count, model) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: count + 16 });
  const { hostname, port } = new URL(client.url);
  const payload = Buffer.from(JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'Hold.' }] }));
  const streams = [];
  for (let i = 0; i < count; i += 1) {
    streams.push(
      new Promise((resolveOpen, rejectOpen) => {
        let resolveEnd;
        const ended = new Promise((resolve) => {
          resolveEnd = resolve;
        });
        const req = postChat({ agent, hostname, port, headers: client.headers, payload }, (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            rejectOpen(new Error(`stream ${i}: status ${res.statusCode}`));
            return;
          }
          let text = '';
          res.once('data', () => resolveOpen({ ended }));
          res.on('data', (part) => {
            text = (text + part.toString()).slice(-64);
          });
          res.on('end', () => resolveEnd({ complete: text.includes('[DONE]') }));
          res.on('error', () => resolveEnd({ complete: false }));
        });
        req.on('error', (error) => {
          rejectOpen(error);
          resolveEnd({ complete: false });
        });
      }),
    );
  }
  const opened = await Promise.all(streams);
  return { opened, agent };
}

/**
 * @param gateway   { pid } of a freshly started gateway
 * @param client    a client for it (its headers and URL are used)
 * @param upstream  the bench upstream (release() ends the held streams)
 */
export async function memoryUnderStreams(gateway, client, upstream, { count, model, warmup, heapMb, forceGc }) {
  for (let i = 0; i < warmup; i += 1) await client.chat({ stream: i % 2 === 0 });
  await sleep(1_000);
  const idleMb = rssMb(gateway.pid);
  const heap = { idleMb: await heapMb?.() };
  const started = Date.now();
  const { opened, agent } = await openStreams(client, count, model);
  const openMs = Date.now() - started;
  await waitFor(async () => (await upstream.stats()).held >= count, { timeoutMs: 10_000, what: 'held streams' });
  // Sample for a while: the held streams keep trickling a chunk a second.
  let openMb = 0;
  for (let i = 0; i < 6; i += 1) {
    openMb = Math.max(openMb, rssMb(gateway.pid));
    await sleep(250);
  }
  heap.openMb = await heapMb?.();
  await upstream.release();
  const results = await Promise.all(opened.map((stream) => stream.ended));
  const completed = results.filter((r) => r.complete).length;
  agent.destroy();
  // V8 gives memory back lazily (idle-time GC, then page release): sample for
  // 10 s and report the RSS at +2 s and the lowest seen ("settled").
  let after2sMb = 0;
  let afterMb = Number.POSITIVE_INFINITY;
  for (let i = 1; i <= 20; i += 1) {
    await sleep(500);
    const now = rssMb(gateway.pid);
    if (i === 4) after2sMb = now;
    afterMb = Math.min(afterMb, now);
  }
  heap.afterMb = await heapMb?.();
  // Diagnosis: a forced full GC (when the process was started with gc-on-signal.cjs).
  let afterGcMb;
  if (forceGc) {
    forceGc();
    await sleep(1_000);
    afterGcMb = rssMb(gateway.pid);
    heap.afterGcMb = await heapMb?.();
  }
  return { count, openMs, idleMb, openMb, after2sMb, afterMb, afterGcMb, completed, heap: heapMb ? heap : undefined };
}
