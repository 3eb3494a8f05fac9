import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { isObject, type ResolvedAnswer } from './dialect.js';
import { openaiDialect } from './fake-openai.js';

/**
 * A simulated GPU inference server (vLLM / Ollama style) that is up and healthy but has
 * a fixed number of slots: requests beyond them wait in a FIFO queue, as those servers
 * queue what they cannot run yet. Each request holds a slot for its prefill, then
 * emits one token per `perTokenMs`. This is the "saturated box" the load-aware chains
 * and the saturation bench scenario are measured against.
 */
export interface GpuBoxOptions {
  /** Requests run at once; the rest wait in arrival order. */
  slots: number;
  /** From taking a slot to the first token. */
  prefillMs: number;
  /** Between two tokens after the first. */
  perTokenMs: number;
  /** Completion tokens per answer (at least 1). A request holds its slot prefillMs + (tokens − 1) × perTokenMs. */
  tokens: number;
  /** Listed by GET /v1/models (default `m`); chat requests are answered whatever model they name. */
  model?: string;
}

export interface GpuBoxStats {
  /** Requests holding a slot now. */
  inFlight: number;
  /** The most requests ever held in slots at once (never above `slots`). */
  maxInFlight: number;
  /** Requests waiting for a slot now. */
  queued: number;
  /** Answers sent in full. */
  served: number;
  /** Clients that left before their answer was complete, queued or running. */
  disconnects: number;
}

export interface GpuBox {
  /** Base URL ending in /v1. */
  readonly url: string;
  stats(): GpuBoxStats;
  close(): Promise<void>;
}

interface Job {
  readonly res: ServerResponse;
  readonly model: string;
  readonly stream: boolean;
  readonly usage: boolean;
  readonly promptTokens: number;
  state: 'queued' | 'running' | 'done';
  timer: NodeJS.Timeout | undefined;
}

const JSON_HEADERS = { 'content-type': 'application/json' };

function errorBody(status: number, message: string): Buffer {
  return Buffer.from(JSON.stringify({ error: { message: `${message} (GPU box)`, type: 'invalid_request_error', param: null, code: null }, status }));
}

/** A rough prompt size, as a server would count it: a token per four characters of the messages. */
function promptTokensOf(body: Record<string, unknown>): number {
  return Math.max(1, Math.ceil(JSON.stringify(body.messages ?? '').length / 4));
}

function answerOf(tokens: number, promptTokens: number): ResolvedAnswer {
  const parts = Array.from({ length: tokens }, (_, i) => (i === 0 ? 'tok0' : ` tok${i}`));
  return {
    content: parts.join(''),
    parts,
    toolCalls: [],
    usage: { prompt_tokens: promptTokens, completion_tokens: tokens },
    finishReason: undefined,
    stopSequence: undefined,
    refusal: undefined,
    thinking: undefined,
  };
}

function validate(o: GpuBoxOptions): void {
  const whole = (name: string, v: number, min: number) => {
    if (!Number.isInteger(v) || v < min) throw new Error(`startGpuBox: ${name} must be an integer ≥ ${min}, got ${v}`);
  };
  whole('slots', o.slots, 1);
  whole('tokens', o.tokens, 1);
  for (const [name, v] of [['prefillMs', o.prefillMs], ['perTokenMs', o.perTokenMs]] as const) {
    if (!Number.isFinite(v) || v < 0) throw new Error(`startGpuBox: ${name} must be a number ≥ 0, got ${v}`);
  }
}

export async function startGpuBox(options: GpuBoxOptions): Promise<GpuBox> {
  validate(options);
  const { slots, prefillMs, perTokenMs, tokens } = options;
  const listing = openaiDialect.modelsBody([options.model ?? 'm']);
  const queue: Job[] = [];
  const running = new Set<Job>();
  const sockets = new Set<Socket>();
  const counts: GpuBoxStats = { inFlight: 0, maxInFlight: 0, queued: 0, served: 0, disconnects: 0 };
  let closing = false;

  const later = (job: Job, ms: number, step: () => void): void => {
    job.timer = setTimeout(() => {
      job.timer = undefined;
      if (job.state === 'running') step();
    }, ms);
  };

  const finish = (job: Job): void => {
    if (job.state === 'running') running.delete(job);
    counts.inFlight = running.size;
    job.state = 'done';
    if (job.timer !== undefined) clearTimeout(job.timer);
    job.timer = undefined;
    admit();
  };

  const run = (job: Job): void => {
    job.state = 'running';
    running.add(job);
    counts.inFlight = running.size;
    counts.maxInFlight = Math.max(counts.maxInFlight, counts.inFlight);
    const answer = answerOf(tokens, job.promptTokens);
    if (!job.stream) {
      // A non-streaming answer is sent whole once its last token is out.
      later(job, prefillMs + (tokens - 1) * perTokenMs, () => {
        const body = openaiDialect.renderJson(answer, job.model);
        job.res.writeHead(200, { ...JSON_HEADERS, 'content-length': body.length });
        job.res.end(body);
        counts.served++;
        finish(job);
      });
      return;
    }
    // Headers go out with the first token, as Ollama and llama.cpp do: a queued request sees nothing at all.
    const rendered = openaiDialect.renderStream(answer, job.model, job.usage);
    let i = 0;
    const step = (): void => {
      if (i === 0) job.res.writeHead(200, { 'content-type': openaiDialect.streamContentType, 'cache-control': 'no-cache' });
      job.res.write(rendered.frames[i++]!);
      if (i < rendered.frames.length) return later(job, perTokenMs, step);
      job.res.end(rendered.end);
      counts.served++;
      finish(job);
    };
    later(job, prefillMs, step);
  };

  /** Fills free slots from the head of the queue. */
  function admit(): void {
    while (!closing && counts.inFlight < slots && queue.length > 0) {
      const job = queue.shift()!;
      counts.queued = queue.length;
      run(job);
    }
  }

  const enqueue = (res: ServerResponse, body: Record<string, unknown>): void => {
    const job: Job = {
      res,
      model: typeof body.model === 'string' ? body.model : (options.model ?? 'm'),
      stream: body.stream === true,
      usage: openaiDialect.wantsUsage(body),
      promptTokens: promptTokensOf(body),
      state: 'queued',
      timer: undefined,
    };
    res.once('close', () => {
      if (job.state === 'done' || closing) return;
      // The client left: its place in the queue or its slot goes to the next in line.
      counts.disconnects++;
      if (job.state === 'queued') {
        queue.splice(queue.indexOf(job), 1);
        counts.queued = queue.length;
        job.state = 'done';
        return;
      }
      finish(job);
    });
    queue.push(job);
    counts.queued = queue.length;
    admit();
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method === 'GET' && openaiDialect.probePaths.has(path)) {
      req.resume();
      res.writeHead(200, { ...JSON_HEADERS, 'content-length': listing.length });
      res.end(listing);
      return;
    }
    if (req.method !== 'POST' || !openaiDialect.chatPaths.has(path)) {
      req.resume();
      const body = errorBody(404, 'not found');
      res.writeHead(404, { ...JSON_HEADERS, 'content-length': body.length });
      res.end(body);
      return;
    }
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      if (!isObject(body)) {
        const error = errorBody(400, 'the body is not a JSON object');
        res.writeHead(400, { ...JSON_HEADERS, 'content-length': error.length });
        res.end(error);
        return;
      }
      enqueue(res, body);
    });
  };

  const server = createServer({ keepAlive: true, noDelay: true }, onRequest);
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = address !== null && typeof address === 'object' ? address.port : 0;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    stats: () => ({ ...counts }),
    async close() {
      if (closing) return;
      closing = true;
      queue.length = 0;
      counts.queued = 0;
      for (const job of running) if (job.timer !== undefined) clearTimeout(job.timer);
      running.clear();
      counts.inFlight = 0;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const gone = Promise.all([...sockets].map((socket) => new Promise<void>((resolve) => socket.once('close', () => resolve()))));
      for (const socket of sockets) socket.destroy();
      await Promise.all([closed, gone]);
    },
  };
}
