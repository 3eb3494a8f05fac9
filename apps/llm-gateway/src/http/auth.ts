/**
 * Bearer key checks. A key is presented as `Authorization: Bearer <key>` or,
 * as Anthropic's SDK sends it, `x-api-key: <key>`: the two are one and the
 * same (`presentedAuthorization`), on every route that takes a key. Keys are compared as SHA-256 digests with
 * `timingSafeEqual`, so neither the key's content nor its length leaks through
 * response timing. Keys are never logged or echoed.
 *
 * Hot path: the accepted keys' digests are computed once; a presented token is
 * hashed with the one-shot `crypto.hash` (about half the cost of
 * `createHash().update().digest()`). A keep-alive connection that was accepted
 * once remembers the exact `Authorization` value it was accepted with, so its
 * next requests skip the hash (a string comparison against what this same
 * connection already sent; any other value goes through the full constant-time
 * check). The remembered value lives only in memory, tied to the socket
 * (WeakMap: gone with the connection), never in logs.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { gatewayError, type GatewayError } from './errors.js';

export type AuthResult = 'ok' | 'missing' | 'invalid';

function digest(key: string): Buffer {
  return hash('sha256', key, 'buffer');
}

const BEARER = /^\s*Bearer\s+(\S+)\s*$/i;

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = BEARER.exec(header);
  return match ? match[1] : undefined;
}

/**
 * The Authorization value a request presents: its `Authorization` header, or
 * else its `x-api-key` as a bearer token. Every key check and the usage
 * record's key fingerprint read this one value.
 */
export function presentedAuthorization(req: IncomingMessage): string | undefined {
  const authorization = req.headers.authorization;
  if (authorization !== undefined) return authorization;
  const key = req.headers['x-api-key'];
  return typeof key === 'string' && key.trim() !== '' ? `Bearer ${key.trim()}` : undefined;
}

export class KeyChecker {
  private readonly digests: readonly Buffer[];
  /** Per connection: the Authorization header value it was last accepted with. */
  private readonly accepted = new WeakMap<Socket, string>();

  constructor(keys: readonly string[]) {
    this.digests = keys.map(digest);
  }

  /** True when any key is set (auth on). */
  get enabled(): boolean {
    return this.digests.length > 0;
  }

  /**
   * Checks an Authorization header. With `socket`, a verdict of 'ok' is
   * remembered for that connection and exactly that header value.
   */
  check(authorization: string | undefined, socket?: Socket): AuthResult {
    if (socket !== undefined && authorization !== undefined && this.accepted.get(socket) === authorization) return 'ok';
    const token = bearerToken(authorization);
    if (token === undefined) return 'missing';
    const presented = digest(token);
    let ok = false;
    // Compare against every key (no early exit) so timing does not reveal which matched.
    for (const d of this.digests) if (timingSafeEqual(d, presented)) ok = true;
    if (!ok) return 'invalid';
    if (socket !== undefined) this.accepted.set(socket, authorization!);
    return 'ok';
  }
}

/** The 401 for a request to a /v1/* route without an accepted API key; undefined when it may pass (or auth is off). */
export function apiKeyError(keys: KeyChecker, req: IncomingMessage): GatewayError | undefined {
  if (!keys.enabled) return undefined;
  const auth = keys.check(presentedAuthorization(req), req.socket);
  if (auth === 'ok') return undefined;
  return auth === 'missing'
    ? gatewayError('missing_api_key', 'Missing API key: send "Authorization: Bearer <key>" or "x-api-key: <key>".')
    : gatewayError('invalid_api_key', 'Invalid API key.');
}
