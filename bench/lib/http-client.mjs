// A measuring HTTP/1.1 client over node:http with keep-alive. The same client
// code path is used for every target, so its own cost cancels out in the
// "added latency" differences.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { CHAT_APIS } from './chat-apis.mjs';

/**
 * A target the benchmark talks to: a base URL, the headers its routing needs,
 * the model name to send and the API its `chat()` speaks (a key of CHAT_APIS:
 * `chat_completions`, `messages` or `responses`, the same prompt each time).
 */
export function createClient({ name, url, headers = {}, model, embeddingModel = model, maxSockets = 1, api = 'chat_completions', pid }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  const { hostname, port } = new URL(url);
  const route = CHAT_APIS[api];
  const bodies = new Map();
  function body(stream) {
    let buffer = bodies.get(stream);
    if (!buffer) {
      buffer = Buffer.from(JSON.stringify(route.body(model, stream)));
      bodies.set(stream, buffer);
    }
    return buffer;
  }
  const embedBody = Buffer.from(JSON.stringify({ model: embeddingModel, input: 'Say hello.' }));
  return {
    name,
    url,
    /** The process that answers (a gateway this run started), when known: its CPU per request is measured (lib/cpu-per-request.mjs). */
    pid,
    headers,
    model,
    api,
    /** The text a complete stream of `chat({ stream: true })` ends with. */
    streamEnd: route.streamEnd,
    agent,
    close: () => agent.destroy(),
    /** One embeddings request (`POST /v1/embeddings`, one input, floats): status, ttfbMs, totalMs, body when asked. */
    embed({ keepBody = false } = {}) {
      return send({ agent, hostname, port, headers, payload: embedBody, path: '/v1/embeddings', keepBody });
    },
    /**
     * One chat completion. Resolves with status, time to first body byte and
     * to the last byte (ms), response headers, and the body text when asked.
     */
    chat({ stream = false, keepBody = false, modelOverride, signal } = {}) {
      const payload = modelOverride ? Buffer.from(JSON.stringify(route.body(modelOverride, stream))) : body(stream);
      return send({ agent, hostname, port, headers, payload, signal, path: route.path, keepBody });
    },
  };
}

/**
 * One POST, timed: status, time to first body byte and to the last byte (ms), headers, body when asked.
 * A kept-alive socket the server closed while it sat idle (its keep-alive timeout, 5 s: a client waits
 * that long while the other targets of a busy run take their turns) resets the request before it is
 * sent: that one is sent again on a fresh socket, as Node's docs advise (`request.reusedSocket`).
 */
function send(options) {
  return sendOnce(options).catch((error) => {
    if (error.code === 'ECONNRESET' && error.reusedSocket === true) return sendOnce(options);
    throw error;
  });
}

function sendOnce({ agent, hostname, port, headers, payload, signal, path, keepBody }) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = postChat({ agent, hostname, port, headers, payload, signal, path }, (res) => {
      let firstByte;
      const parts = keepBody ? [] : undefined;
      res.on('data', (part) => {
        if (firstByte === undefined) firstByte = performance.now();
        parts?.push(part);
      });
      res.on('end', () => {
        const ended = performance.now();
        resolve({
          status: res.statusCode,
          headers: res.headers,
          ttfbMs: (firstByte ?? ended) - started,
          totalMs: ended - started,
          body: parts ? Buffer.concat(parts).toString('utf8') : undefined,
        });
      });
      res.on('error', reject);
    });
    req.on('error', (error) => {
      error.reusedSocket = req.reusedSocket;
      reject(error);
    });
  });
}

/**
 * POSTs a prepared body to `path` (default `/v1/chat/completions`; JSON, with
 * its length) and ends the request: the one request shape every measurement sends.
 * Takes { agent, hostname, port, headers, payload (a Buffer), signal?, path? }; returns the request.
 */
export function postChat({ agent, hostname, port, headers, payload, signal, path = '/v1/chat/completions' }, onResponse) {
  const req = http.request(
    {
      agent,
      hostname,
      port,
      method: 'POST',
      path,
      headers: { ...headers, 'content-type': 'application/json', 'content-length': payload.length },
      signal,
    },
    onResponse,
  );
  req.end(payload);
  return req;
}
