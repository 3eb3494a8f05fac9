// Open-loop load for the saturation scenario: arrivals on a Poisson schedule that does not wait for
// answers (a queue that grows shows up as waiting, as users see it), and one streamed chat completion
// per arrival, timed to its first content token.
import http from 'node:http';
import { performance } from 'node:perf_hooks';

/** Arrival offsets (ms) of a Poisson process at `ratePerS` over `durationS`, from `random` (seeded: the same schedule for every config). */
export function poissonArrivals(ratePerS, durationS, random) {
  const offsets = [];
  for (let t = 0; ; ) {
    t += (-Math.log(1 - random()) / ratePerS) * 1_000;
    if (t >= durationS * 1_000) return offsets;
    offsets.push(t);
  }
}

/** The first SSE data line with non-empty content text: where the user sees the first token. */
const FIRST_CONTENT = /"content":"[^"]/;

/**
 * One streamed chat completion: `{ ok, status, ttftMs, totalMs, error }`, where ttftMs is the time to
 * the first content delta and ok means a 200 whose stream carried content and ended with [DONE].
 * Gives up after `timeoutMs` (an error: `timeout`).
 */
export function streamedChat({ agent, url, path, headers, body, timeoutMs }) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const started = performance.now();
    let ttftMs;
    let text = '';
    let settled = false;
    const done = (result) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ttftMs, totalMs: performance.now() - started, ...result });
    };
    const req = http.request(
      { agent, hostname, port, path, method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'content-length': body.length } },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (part) => {
          text += part;
          if (ttftMs === undefined && FIRST_CONTENT.test(text)) ttftMs = performance.now() - started;
          // Only the head (for the first token) and the tail (for [DONE]) matter: keep the buffer small.
          if (ttftMs !== undefined && text.length > 256) text = text.slice(-64);
        });
        res.on('end', () => {
          const ok = res.statusCode === 200 && ttftMs !== undefined && text.includes('[DONE]');
          done({ ok, status: res.statusCode, error: ok ? undefined : res.statusCode === 200 ? 'incomplete stream' : `status ${res.statusCode}` });
        });
        res.on('error', (error) => done({ ok: false, status: res.statusCode, error: error.code ?? error.message }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      done({ ok: false, status: undefined, error: 'timeout' });
    }, timeoutMs);
    req.on('error', (error) => done({ ok: false, status: undefined, error: error.code ?? error.message }));
    req.end(body);
  });
}
