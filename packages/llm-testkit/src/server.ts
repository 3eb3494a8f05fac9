import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { BehaviorTable } from './behaviors.js';
import { isObject, type Dialect } from './dialect.js';
import { Recorder } from './recorder.js';
import { QuotaWindow } from './quota.js';
import { Responder, type Exchange } from './respond.js';
import type { FakeBehavior, FakeScript, FakeUpstream, FakeUpstreamOptions, RecordedRequest } from './types.js';

// Longer than undici's 4 s client default, so the client (not the fake) decides when to drop idle sockets.
const KEEP_ALIVE_MS = 30_000; // 30 s

const NOT_FOUND = Buffer.from(JSON.stringify({ error: { message: 'not found (fake upstream)', type: 'invalid_request_error', param: null, code: null } }));

function parseBody(raw: string): unknown {
  if (raw === '') return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function pathOf(url: string | undefined): string {
  const u = url ?? '/';
  const q = u.indexOf('?');
  return q < 0 ? u : u.slice(0, q);
}

function queryOf(url: string | undefined): string {
  const q = url === undefined ? -1 : url.indexOf('?');
  return q < 0 ? '' : url!.slice(q);
}

function sendRefusal(res: ServerResponse, refused: { readonly status: number; readonly body: Buffer }): void {
  res.writeHead(refused.status, { 'content-type': 'application/json', 'content-length': refused.body.length });
  res.end(refused.body);
}

/** One fake upstream: a real node:http server on loopback, speaking one dialect. */
class FakeUpstreamServer implements FakeUpstream {
  readonly kind: FakeUpstream['kind'];
  #port = 0;
  readonly #host: string;
  readonly #dialect: Dialect;
  readonly #server: Server;
  readonly #behaviors: BehaviorTable;
  readonly #recorder: Recorder;
  readonly #responder: Responder;
  readonly #sockets = new Set<Socket>();
  readonly #inflight = new Set<Exchange>();
  readonly #baseModels: string[];
  readonly #quota: QuotaWindow | undefined;
  #models: string[] | undefined; // set by setModels; otherwise derived
  #modelsBody: Buffer | undefined; // cached probe answer, dropped when the listing changes
  #probeStatus = 200;
  #listening = false;
  #closed = false;

  constructor(dialect: Dialect, options: FakeUpstreamOptions) {
    this.kind = dialect.kind;
    this.#dialect = dialect;
    this.#host = options.host ?? '127.0.0.1';
    this.#baseModels = options.models ?? [];
    this.#behaviors = new BehaviorTable(options.default);
    this.#recorder = new Recorder(options.record ?? true);
    this.#responder = new Responder(dialect, options.name);
    this.#quota = options.quota === undefined ? undefined : new QuotaWindow(options.quota);
    this.#server = createServer({ keepAlive: true, keepAliveTimeout: KEEP_ALIVE_MS, noDelay: true }, (req, res) => this.#onRequest(req, res));
    this.#server.keepAliveTimeout = KEEP_ALIVE_MS;
    this.#server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
  }

  get port(): number {
    return this.#port;
  }
  get url(): string {
    return `http://${this.#host.includes(':') ? `[${this.#host}]` : this.#host}:${this.#port}`;
  }
  get baseUrl(): string {
    return this.kind === 'openai' ? `${this.url}/v1` : this.url;
  }
  get requests(): RecordedRequest[] {
    return this.#recorder.requests;
  }
  get probes(): RecordedRequest[] {
    return this.#recorder.probes;
  }

  listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (e: Error) => reject(e);
      this.#server.once('error', onError);
      this.#server.listen(port, this.#host, () => {
        this.#server.off('error', onError);
        const address = this.#server.address();
        if (address !== null && typeof address === 'object') this.#port = address.port;
        this.#listening = true;
        resolve();
      });
    });
  }

  on(model: string, behavior: FakeBehavior | FakeBehavior[] | FakeScript): void {
    this.#behaviors.set(model, behavior);
    this.#modelsBody = undefined;
  }

  setModels(models: string[]): void {
    this.#models = [...models];
    this.#modelsBody = undefined;
  }

  setProbeStatus(status: number): void {
    this.#probeStatus = status;
  }

  count(model?: string): number {
    return this.#recorder.count(model);
  }
  probeCount(): number {
    return this.#recorder.probeCount();
  }
  waitForRequest(predicate?: (request: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest> {
    return this.#recorder.waitForRequest(predicate, timeoutMs);
  }
  waitForClientClose(timeoutMs?: number, predicate?: (request: RecordedRequest) => boolean): Promise<RecordedRequest> {
    return this.#recorder.waitForClientClose(timeoutMs, predicate);
  }
  quotaRefusals(): number {
    return this.#quota?.refusals ?? 0;
  }
  openConnections(): number {
    return this.#sockets.size;
  }

  reset(): void {
    this.#recorder.reset();
    this.#behaviors.clear();
    this.#models = undefined;
    this.#modelsBody = undefined;
    this.#probeStatus = 200;
    this.#quota?.reset();
  }

  async stop(): Promise<void> {
    if (!this.#listening) return;
    this.#listening = false;
    // Like a crashed process: in-flight and idle connections die with the listener.
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    const gone = this.#dropEverything();
    await Promise.all([closed, gone]);
  }

  async restart(): Promise<void> {
    if (this.#closed) throw new Error('fake upstream: restart() after close()');
    if (this.#listening) return;
    await this.listen(this.#port);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.stop();
    await this.#dropEverything();
    this.#recorder.close();
  }

  /** Resolves once every socket has emitted 'close', so no handle outlives stop()/close(). */
  #dropEverything(): Promise<void> {
    // Socket 'close' events come later, asynchronously: marking the exchanges now is what
    // keeps these closes from being blamed on the client.
    for (const ex of this.#inflight) {
      if (ex.timer !== undefined) clearTimeout(ex.timer);
      ex.timer = undefined;
      ex.selfClosed = true;
    }
    const sockets = [...this.#sockets];
    const gone = Promise.all(sockets.map((socket) => new Promise<void>((resolve) => socket.once('close', () => resolve()))));
    for (const socket of sockets) socket.destroy();
    return gone.then(() => undefined);
  }

  #listing(): Buffer {
    return (this.#modelsBody ??= this.#dialect.modelsBody(this.#models ?? [...new Set([...this.#baseModels, ...this.#behaviors.models()])]));
  }

  #onRequest(req: IncomingMessage, res: ServerResponse): void {
    const path = pathOf(req.url);
    if (req.method === 'POST' && this.#dialect.chatPaths.has(path)) return this.#readBody(req, res, path, 'chat');
    if (req.method === 'POST' && this.#dialect.embedPaths.has(path)) return this.#readBody(req, res, path, 'embed');
    if (req.method === 'GET' && this.#dialect.probePaths.has(path)) return this.#probe(req, res, path);
    const extra = req.method === 'GET' ? this.#dialect.extraGet?.(path) : undefined;
    req.resume();
    if (extra !== undefined) {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': extra.length });
      res.end(extra);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json', 'content-length': NOT_FOUND.length });
    res.end(NOT_FOUND);
  }

  #probe(req: IncomingMessage, res: ServerResponse, path: string): void {
    req.resume();
    this.#recorder.probe({ method: 'GET', path, query: queryOf(req.url), headers: req.headers, body: undefined, model: undefined, operation: 'chat', stream: false, at: Date.now(), closedByClient: false });
    const refused = this.#dialect.refuse?.(req.headers, undefined, true);
    if (refused !== undefined) return sendRefusal(res, refused);
    const ok = this.#probeStatus === 200;
    const body = ok ? this.#listing() : this.#dialect.errorBody(this.#probeStatus, '');
    res.writeHead(this.#probeStatus, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  }

  #readBody(req: IncomingMessage, res: ServerResponse, path: string, operation: 'chat' | 'embed'): void {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => this.#answer(req, res, path, parseBody(raw), operation));
  }

  #answer(req: IncomingMessage, res: ServerResponse, path: string, body: unknown, operation: 'chat' | 'embed'): void {
    const model = isObject(body) && typeof body.model === 'string' ? body.model : undefined;
    // Embeddings never stream, whatever the body says.
    const stream = operation === 'chat' && this.#dialect.wantsStream(body);
    const refused = this.#dialect.refuse?.(req.headers, body, false);
    if (refused !== undefined) {
      // Refused as the real upstream would, before any behaviour: recorded, and no `on()` sequence step is used up.
      this.#recorder.request({ method: 'POST', path, query: queryOf(req.url), headers: req.headers, body, model, operation, stream, at: Date.now(), closedByClient: false });
      return sendRefusal(res, refused);
    }
    // Past the quota: a 429 as the provider sends it, and no `on()` sequence step is used up.
    const admitted = this.#quota?.admit(Date.now());
    const behavior: FakeBehavior =
      admitted?.ok === false
        ? { kind: 'status', status: 429, headers: { 'retry-after': String(admitted.retryAfterS) } }
        : this.#behaviors.take(model, body);
    const record: RecordedRequest = { method: 'POST', path, query: queryOf(req.url), headers: req.headers, body, model, operation, stream, behavior, at: Date.now(), closedByClient: false };
    const ex: Exchange = { res, finished: false, selfClosed: false, timer: undefined };
    this.#inflight.add(ex);
    res.once('close', () => {
      ex.finished = true;
      this.#inflight.delete(ex);
      if (ex.timer !== undefined) clearTimeout(ex.timer);
      // 'close' without a finished response: the connection went away mid-request.
      if (!res.writableFinished && !ex.selfClosed) this.#recorder.clientClosed(record);
    });
    this.#recorder.request(record);
    if (operation === 'embed') this.#responder.respondEmbeddings(ex, behavior, model ?? 'unknown', body);
    else this.#responder.respond(ex, behavior, model ?? 'unknown', body, stream);
  }
}

export async function startFakeUpstream(dialect: Dialect, options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const upstream = new FakeUpstreamServer(dialect, options);
  await upstream.listen(options.port ?? 0);
  return upstream;
}
