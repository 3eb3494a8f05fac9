/**
 * Bearer key checks. A key is presented as `Authorization: Bearer <key>` or,
 * as Anthropic's SDK sends it, `x-api-key: <key>`: the two are one and the
 * same (`presentedAuthorization`), on every route that takes a key. A check
 * that passes names the caller (api-caller.ts): who the key belongs to, never
 * the key. Keys are compared as SHA-256 digests (in constant time, see
 * `CallerSource`), so neither the key's content nor its length leaks through
 * response timing. Keys are never logged or echoed.
 *
 * Hot path: a presented token is hashed once with the one-shot `crypto.hash`,
 * and that digest is what every source is asked about. A keep-alive
 * connection that was accepted once remembers the exact `Authorization` value
 * it was accepted with and the caller it named, so its next requests skip the
 * hash (a string comparison against what this same connection already sent;
 * any other value goes through the full check). The remembered value lives
 * only in memory, tied to the socket (WeakMap: gone with the connection),
 * never in logs; it is checked again once any source's keys changed (`epoch`).
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { keyDigest, StaticKeys, type ApiCaller, type CallerSource } from './api-caller.js';
import { gatewayError, type GatewayError } from './errors.js';

/** A failed check: no bearer token at all, or one no source knows. */
export type AuthRefusal = 'missing' | 'invalid';

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

/** What a connection was last accepted with. */
interface Accepted<C> {
  readonly authorization: string;
  readonly caller: C;
  /** The sum of the sources' epochs when it was accepted (they only grow, so any change shows). */
  readonly epoch: number;
}

export class KeyChecker<C extends ApiCaller = ApiCaller> {
  /** Per connection: the Authorization header value it was last accepted with, and its caller. */
  private readonly accepted = new WeakMap<Socket, Accepted<C>>();

  /**
   * `sources` are asked in order; the first that knows the key names the caller.
   * `required`: the check is on even while no source holds a key (then every
   * request is refused), for an address other machines reach (cli.ts `authRequired`).
   */
  constructor(
    private readonly sources: readonly CallerSource<C>[],
    private readonly options: { readonly required?: boolean } = {},
  ) {}

  /** A checker of fixed keys (MANA_LLM_API_KEYS, the admin key), callers `<prefix>-1`, `<prefix>-2`, …. */
  static ofKeys(keys: readonly string[], prefix?: string): KeyChecker {
    return new KeyChecker([new StaticKeys(keys, prefix)]);
  }

  /** True when the check is required, or any source holds a key (auth on). */
  get enabled(): boolean {
    if (this.options.required === true) return true;
    for (const source of this.sources) if (source.hasKeys) return true;
    return false;
  }

  private epoch(): number {
    let epoch = 0;
    for (const source of this.sources) epoch += source.epoch;
    return epoch;
  }

  /**
   * Checks an Authorization header: the caller its key names, or why not.
   * With `socket`, an accepted value is remembered for that connection
   * (exactly that header value, with its caller).
   */
  check(authorization: string | undefined, socket?: Socket): C | AuthRefusal {
    if (socket !== undefined && authorization !== undefined) {
      const known = this.accepted.get(socket);
      if (known !== undefined && known.authorization === authorization && known.epoch === this.epoch()) return known.caller;
    }
    const token = bearerToken(authorization);
    if (token === undefined) return 'missing';
    const digest = keyDigest(token);
    let caller: C | undefined;
    for (const source of this.sources) {
      caller = source.callerOf(digest);
      if (caller !== undefined) break;
    }
    if (caller === undefined) return 'invalid';
    if (socket !== undefined) this.accepted.set(socket, { authorization: authorization!, caller, epoch: this.epoch() });
    return caller;
  }
}

/**
 * The api_key step of a /v1/* route: the caller the presented key names, null
 * when auth is off (every request may pass, nobody in particular calls), or the
 * 401 to answer.
 */
export function checkApiKey(keys: KeyChecker, req: IncomingMessage): ApiCaller | null | GatewayError {
  if (!keys.enabled) return null;
  const auth = keys.check(presentedAuthorization(req), req.socket);
  if (typeof auth === 'object') return auth;
  return auth === 'missing'
    ? gatewayError('missing_api_key', 'Missing API key: send "Authorization: Bearer <key>" or "x-api-key: <key>".')
    : gatewayError('invalid_api_key', 'Invalid API key.');
}
