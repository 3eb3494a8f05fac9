import { Pool, type Dispatcher } from 'undici';
import type { ProviderConfig, Settings, TargetConfig } from '../types.js';
import { InvalidResponseError, type HttpFailure, type RelayHeaders } from './adapter.js';
import type { BodyLimits } from './collect-body.js';
import { preciseConnector } from './connect-timeout.js';
import { isPlainObject } from '../plain-object.js';

/** Idle keep-alive sockets are kept this long (upstream `Keep-Alive` hints may shorten it). */
const KEEP_ALIVE_TIMEOUT_MS = 30_000; // 30 s

/**
 * One undici keep-alive `Pool` per upstream origin (and connect timeout, which
 * undici fixes per pool). Reusing warm sockets is most of the gateway's latency
 * budget: a fresh TCP (+TLS) handshake per request would cost more than every
 * other step combined.
 */
export class Dispatchers {
  private readonly pools = new Map<string, Pool>();
  private closed = false;

  get(origin: string, connectTimeoutMs: number): Pool {
    const key = origin + '|' + connectTimeoutMs;
    let pool = this.pools.get(key);
    if (pool === undefined) {
      if (this.closed) throw new Error('router is closed');
      pool = new Pool(origin, {
        connect: preciseConnector(connectTimeoutMs),
        keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      });
      this.pools.set(key, pool);
    }
    return pool;
  }

  /** Close pools whose origin is no longer used (after a reload); in-flight requests finish first. */
  async retain(origins: ReadonlySet<string>): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const [key, pool] of this.pools) {
      if (!origins.has(key.slice(0, key.lastIndexOf('|')))) {
        this.pools.delete(key);
        closing.push(pool.close().catch(() => undefined));
      }
    }
    await Promise.all(closing);
  }

  /** Stop for good: open requests are destroyed, so nothing keeps the process alive. */
  async close(): Promise<void> {
    this.closed = true;
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.destroy().catch(() => undefined)));
  }
}

type IncomingHttpHeaders = Dispatcher.ResponseData['headers'];

/**
 * A base URL split once into the pool origin, the path prefix and the query
 * string (`https://x/v1?api-version=1` → `https://x`, `/v1`, `?api-version=1`).
 */
export interface Endpoint {
  readonly origin: string;
  readonly basePath: string;
  /** `?…` to append to every request path, or `''`. */
  readonly query: string;
}

export function splitBaseUrl(baseUrl: string): Endpoint {
  const url = new URL(baseUrl);
  let basePath = url.pathname;
  while (basePath.endsWith('/')) basePath = basePath.slice(0, -1);
  return { origin: url.origin, basePath, query: url.search };
}

/**
 * undici's `bodyTimeout` for chat calls: the longest silence inside a body once
 * it started (the first byte itself is timed by the attempt's own precise
 * timer, see `attempt/first-byte-timer.ts`, so undici's `headersTimeout` is off).
 * undici runs it on coarse "fast timers" (about 1 s resolution, far cheaper than
 * a native timer per chunk), which is plenty for a gap measured in seconds.
 */
export function bodyTimeout(target: TargetConfig): number {
  // A backstop only: before a stream's commit the first-byte timer bounds it, after it the
  // committed stream's own idle timer (stream-commit.ts), both precise; this must not fire first.
  return Math.max(target.settings.firstByteTimeoutMs, target.settings.streamIdleTimeoutMs);
}

/**
 * Keeps only `x-ratelimit-*` and `retry-after`, the headers a caller may want
 * relayed — and of those, none the upstream names in its own `Connection`
 * header: those are hop-by-hop, meant for this connection only (RFC 9110 §7.6.1).
 */
export function relayHeaders(headers: IncomingHttpHeaders): RelayHeaders {
  const out: RelayHeaders = {};
  const connection = headers.connection;
  const hopByHop = typeof connection === 'string' ? connection.toLowerCase() : '';
  for (const key in headers) {
    if (key === 'retry-after' || key.startsWith('x-ratelimit-')) {
      if (hopByHop.includes(key) && namesHeader(hopByHop, key)) continue;
      const value = headers[key];
      if (value !== undefined) out[key] = Array.isArray(value) ? value.join(', ') : value;
    }
  }
  return out;
}

/** Whether a `Connection` header value (lower case) lists `name` as one of its comma-separated tokens. */
function namesHeader(connection: string, name: string): boolean {
  for (const token of connection.split(',')) if (token.trim() === name) return true;
  return false;
}

/** A non-2xx stream answer: its body read up to `max_error_body_bytes` (truncated beyond). */
export async function httpFailure(
  status: number,
  headers: IncomingHttpHeaders,
  body: { text(maxBytes: number): Promise<string> },
  target: TargetConfig,
): Promise<HttpFailure> {
  return httpFailureOf(status, headers, await body.text(target.settings.maxErrorBodyBytes));
}

/** The memory bounds of a whole-body read for this target or provider (see collect-body.ts). */
export function bodyLimits(of: { readonly settings: Settings }): BodyLimits {
  return { maxBytes: of.settings.maxResponseBytes, maxErrorBytes: of.settings.maxErrorBodyBytes };
}

/** A non-2xx answer whose body has been read already. */
export function httpFailureOf(status: number, headers: IncomingHttpHeaders, body: string): HttpFailure {
  const contentType = headers['content-type'];
  return {
    ok: false,
    status,
    body,
    contentType: Array.isArray(contentType) ? contentType[0] : contentType,
    headers: relayHeaders(headers),
  };
}

/** The key as OpenAI-compatible servers (and Ollama behind a proxy) take it: `Authorization: Bearer`. */
export function bearerAuth(apiKey: string | undefined): Readonly<Record<string, string>> {
  return apiKey ? { authorization: 'Bearer ' + apiKey } : {};
}

/**
 * Static request headers of a provider, built once per provider object (snapshots are immutable):
 * its own `headers`, then the protocol's (the key among them), which win.
 */
export function providerHeaders(
  provider: ProviderConfig,
  withBody: boolean,
  protocolHeaders: (apiKey: string | undefined) => Readonly<Record<string, string>> = bearerAuth,
): Record<string, string> {
  const headers: Record<string, string> = { ...provider.headers };
  if (withBody) headers['content-type'] = 'application/json';
  return Object.assign(headers, protocolHeaders(provider.apiKey));
}

/** `JSON.parse` of an upstream body; malformed JSON is the upstream's fault (`InvalidResponseError(notJson)`). */
export function parseJson(text: string, notJson: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new InvalidResponseError(notJson);
  }
}

/** `parseJson`, and the value must be a JSON object (else `InvalidResponseError(notObject)`). */
export function parseJsonObject(text: string, notJson: string, notObject: string): Record<string, unknown> {
  const value = parseJson(text, notJson);
  if (!isPlainObject(value)) throw new InvalidResponseError(notObject);
  return value;
}
