// The benchmark's fake OpenAI upstream, run as its own process so that its
// event loop never competes with the client that measures or the gateway under
// test. It is deliberately minimal (pre-built bodies, no request recording):
// the testkit's fake records every request, which is right for tests and wrong
// for 100k-request load runs.
//
// The model name in the request body picks the behaviour:
//   `slow-stream` (stream) headers + role chunk at once, then a content chunk every
//                 `SLOW_INTERVAL_MS` until the parent sends {cmd:'release'}; then [DONE]
//   `hang`        accept, never answer (until the client closes); so does every
//                 path under /hang/ (a base URL for a wholly hanging provider)
//   anything else answer at once; stream → 3 content chunks + usage + [DONE]
//
// POST …/embeddings answers one 768-float vector per input string (the size of
// nomic-embed-text's), pre-built, so the gateway's parse / check / re-encode of
// a realistic answer is what gets measured.
//
// Protocol with the parent (IPC): sends {ready:true, port}; answers
// {cmd:'stats'} with {stats:{held, open}}; {cmd:'release'} ends held streams;
// {cmd:'hang'} makes every later request hang.
import http from 'node:http';

const SLOW_INTERVAL_MS = 1_000; // 1 s between chunks of a held stream
const host = '127.0.0.1';
const port = Number(process.env.BENCH_UPSTREAM_PORT ?? 0);

const created = 1_764_000_000;
const jsonHeaders = { 'content-type': 'application/json' };
const sseHeaders = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

function completion(model) {
  return Buffer.from(
    JSON.stringify({
      id: 'chatcmpl-bench',
      object: 'chat.completion',
      created,
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello from the benchmark upstream.' },
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 9, completion_tokens: 6, total_tokens: 15 },
    }),
  );
}

function chunk(model, delta, finish = null, usage) {
  const body = {
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  if (usage) body.usage = usage;
  return `data: ${JSON.stringify(body)}\n\n`;
}

const bodies = new Map();
function cached(model) {
  let entry = bodies.get(model);
  if (!entry) {
    entry = {
      json: completion(model),
      first: Buffer.from(chunk(model, { role: 'assistant', content: 'Hello' })),
      rest: Buffer.from(
        chunk(model, { content: ' from the' }) +
          chunk(model, { content: ' benchmark upstream.' }, 'stop') +
          chunk(model, {}, null, { prompt_tokens: 9, completion_tokens: 6, total_tokens: 15 }) +
          'data: [DONE]\n\n',
      ),
    };
    bodies.set(model, entry);
  }
  return entry;
}

const EMBEDDING_DIMENSIONS = 768; // nomic-embed-text v1.5
const vector = Array.from({ length: EMBEDDING_DIMENSIONS }, (_, i) => Math.fround(Math.sin(i + 1) / 10));
const embeddingBodies = new Map();
/** An OpenAI embedding list with `count` vectors (the same one each time). */
function embeddings(model, count) {
  const key = `${model}|${count}`;
  let body = embeddingBodies.get(key);
  if (!body) {
    body = Buffer.from(
      JSON.stringify({
        object: 'list',
        data: Array.from({ length: count }, (_, index) => ({ object: 'embedding', index, embedding: vector })),
        model,
        usage: { prompt_tokens: 4 * count, total_tokens: 4 * count },
      }),
    );
    embeddingBodies.set(key, body);
  }
  return body;
}

const modelsBody = Buffer.from(
  JSON.stringify({
    object: 'list',
    data: ['fast', 'slow-stream', 'hang'].map((id) => ({ id, object: 'model', created, owned_by: 'bench' })),
  }),
);

/** Streams held open by `slow-stream` until the parent says release. */
const held = new Set();
let hangAll = false;
const sockets = new Set();

function holdStream(res, model) {
  res.writeHead(200, sseHeaders);
  res.write(chunk(model, { role: 'assistant', content: 'Hold' }));
  const entry = { res, model, timer: undefined };
  entry.timer = setInterval(() => res.write(chunk(model, { content: '.' })), SLOW_INTERVAL_MS);
  held.add(entry);
  res.on('close', () => {
    clearInterval(entry.timer);
    held.delete(entry);
  });
}

const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  // Everything under /hang/ (chat and the /models probe) is a hanging upstream,
  // and so is every path once the parent has sent {cmd:'hang'}.
  if (hangAll || req.url.startsWith('/hang/')) {
    req.resume();
    return;
  }
  if (req.method === 'GET' && req.url.endsWith('/models')) {
    res.writeHead(200, jsonHeaders);
    res.end(modelsBody);
    return;
  }
  const embed = req.method === 'POST' && req.url.endsWith('/embeddings');
  if (!embed && (req.method !== 'POST' || !req.url.endsWith('/chat/completions'))) {
    res.writeHead(404, jsonHeaders);
    res.end('{"error":{"message":"not found"}}');
    return;
  }
  const parts = [];
  req.on('data', (part) => parts.push(part));
  req.on('end', () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8'));
    } catch {
      res.writeHead(400, jsonHeaders);
      res.end('{"error":{"message":"bad json"}}');
      return;
    }
    const model = typeof body.model === 'string' ? body.model : 'fast';
    if (embed) {
      const entry = embeddings(model, Array.isArray(body.input) ? body.input.length : 1);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': entry.length });
      res.end(entry);
      return;
    }
    if (model.endsWith('hang')) return; // never answer; the socket closes when the client gives up
    if (body.stream === true) {
      if (model.endsWith('slow-stream')) return holdStream(res, model);
      const entry = cached(model);
      res.writeHead(200, sseHeaders);
      res.write(entry.first);
      // The rest goes out on the next turn so first byte and last byte differ.
      setImmediate(() => res.end(entry.rest));
      return;
    }
    const entry = cached(model);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': entry.json.length });
    res.end(entry.json);
  });
});
server.on('connection', (socket) => {
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
});
server.listen(port, host, () => {
  process.send?.({ ready: true, port: server.address().port });
});

process.on('message', (message) => {
  if (message?.cmd === 'release') {
    for (const entry of held) {
      clearInterval(entry.timer);
      entry.res.end(chunk(entry.model, {}, 'stop') + 'data: [DONE]\n\n');
    }
    held.clear();
    process.send?.({ released: true });
  } else if (message?.cmd === 'hang') {
    hangAll = true;
    process.send?.({ hanging: true });
  } else if (message?.cmd === 'stats') {
    process.send?.({ stats: { held: held.size, open: sockets.size } });
  }
});
process.on('disconnect', () => process.exit(0));
