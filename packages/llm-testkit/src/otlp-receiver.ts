/**
 * A real OTLP/HTTP trace receiver on loopback, for tests of a traced
 * gateway: what an OpenTelemetry Collector's `otlp` receiver does for
 * `POST /v1/traces`, minus the pipeline. It decodes what the official
 * exporters send (protobuf or JSON, gzip or not: otlp-spans.ts), keeps the
 * spans, and answers as told: accept (the default), a status (500, 413, …),
 * or accept only after a delay (a slow collector). Its `url` is what a user
 * puts in OTEL_EXPORTER_OTLP_ENDPOINT. A collector that is down is
 * `refusingPort()` instead.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { decodeJsonTraces, decodeProtobufTraces, type ReceivedSpan } from './otlp-spans.js';

/** How the receiver answers an export. */
export type OtlpBehavior =
  | { readonly kind: 'accept' }
  | { readonly kind: 'status'; readonly status: number }
  /** Keep the spans, but answer only after `ms` (the exporter may give up first). */
  | { readonly kind: 'delay'; readonly ms: number };

/** One export request as it arrived. */
export interface OtlpExport {
  readonly encoding: 'protobuf' | 'json';
  readonly spans: number;
  /** Request headers, lowercased (what OTEL_EXPORTER_OTLP_HEADERS sent). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface OtlpReceiverOptions {
  /** Keep the spans and exports received (default true). False keeps memory flat under load (benchmarks): only counted. */
  readonly record?: boolean;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:PORT`: the OTLP endpoint (spans go to `/v1/traces` under it). */
  readonly url: string;
  /** Every span received (accepted or not, in arrival order); empty with `record: false`. */
  readonly spans: readonly ReceivedSpan[];
  readonly exports: readonly OtlpExport[];
  /** Spans received so far, recorded or not. */
  spanCount(): number;
  /** How the next exports are answered. */
  respond(behavior: OtlpBehavior): void;
  /** The spans so far once `done(spans)` holds; waits for more exports until then (rejects after `timeoutMs`). */
  waitForSpans(done: (spans: readonly ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<readonly ReceivedSpan[]>;
  /** Forgets the spans and exports received so far. */
  reset(): void;
  close(): Promise<void>;
}

const DEFAULT_WAIT_MS = 10_000; // 10 s: a batch processor's delay plus a loaded CI machine

export async function startOtlpReceiver(options: OtlpReceiverOptions = {}): Promise<OtlpReceiver> {
  const record = options.record ?? true;
  const spans: ReceivedSpan[] = [];
  const exports: OtlpExport[] = [];
  const waiters = new Set<() => void>();
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();
  let behavior: OtlpBehavior = { kind: 'accept' };
  let count = 0;

  const received = (encoding: OtlpExport['encoding'], batch: ReceivedSpan[], req: IncomingMessage): void => {
    count += batch.length;
    if (!record) return;
    spans.push(...batch);
    exports.push({ encoding, spans: batch.length, headers: { ...req.headers } });
    for (const wake of waiters) wake();
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
  });

  function handle(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
    if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/traces') return answer(res, 404, 'text/plain', 'not found');
    const json = (req.headers['content-type'] ?? '').includes('json');
    let batch: ReceivedSpan[];
    try {
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      batch = json ? decodeJsonTraces(body) : decodeProtobufTraces(body);
    } catch (error) {
      return answer(res, 400, 'text/plain', `undecodable export: ${(error as Error).message}`);
    }
    received(json ? 'json' : 'protobuf', batch, req);
    const now = behavior;
    // An empty ExportTraceServiceResponse: no bytes in protobuf, `{}` in JSON.
    const ok = (): void => answer(res, 200, json ? 'application/json' : 'application/x-protobuf', json ? '{}' : '');
    if (now.kind === 'status') return answer(res, now.status, 'application/json', JSON.stringify({ code: now.status, message: 'refused by the test receiver' }));
    if (now.kind === 'delay') {
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!res.destroyed) ok();
      }, now.ms);
      timers.add(timer);
      return;
    }
    ok();
  }

  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    exports,
    spanCount: () => count,
    respond(next) {
      behavior = next;
    },
    waitForSpans(done, timeoutMs = DEFAULT_WAIT_MS) {
      if (done(spans)) return Promise.resolve(spans);
      return new Promise((resolve, reject) => {
        const wake = (): void => {
          if (!done(spans)) return;
          clearTimeout(timer);
          waiters.delete(wake);
          resolve(spans);
        };
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`OTLP receiver: not the spans awaited within ${timeoutMs} ms; received ${spans.length}: ${spans.map((s) => s.name).join(', ')}`));
        }, timeoutMs);
        waiters.add(wake);
      });
    },
    reset() {
      spans.length = 0;
      exports.length = 0;
      count = 0;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

function answer(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
