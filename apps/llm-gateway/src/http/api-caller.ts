/**
 * Who calls: the identity a request's API key names, and where such
 * identities come from.
 *
 * A request admitted by the api_key step carries its `ApiCaller` to its usage
 * record (`key_id`, `key_name`), its log line (`key`) and the
 * `mana_llm_key_requests_total{key_name}` metric. With auth off there is no
 * caller (null). A caller is never the secret: a key is known by its public id
 * and its name only.
 *
 * Keys come from `CallerSource`s, which the key check (auth.ts) consults in
 * turn: today the static keys of MANA_LLM_API_KEYS (`StaticKeys`); a source of
 * keys managed at runtime is one more implementation of the same interface,
 * and may hand out a subtype of `ApiCaller` that carries its policy (allowed
 * aliases, priority, concurrency).
 */
import { hash, timingSafeEqual } from 'node:crypto';

/** Who a request's key says is calling. */
export interface ApiCaller {
  /** The key's stable public id (`env-1`, … for MANA_LLM_API_KEYS): what usage records and the `key` filter use. */
  readonly id: string;
  /** The consuming service's name (the same as the id for MANA_LLM_API_KEYS): what logs and metrics show. */
  readonly name: string;
}

/**
 * A place keys come from. The key check hashes a presented token ONCE
 * (SHA-256) and asks each source for the caller of that digest; a source never
 * sees the token itself, and never stores a secret, only digests.
 *
 * Contract:
 * - `callerOf` answers from memory, synchronously (no request waits on a database).
 * - It must not reveal through its timing which of its keys matched, or how
 *   close a wrong key came: compare digests in constant time over all of them
 *   (as `StaticKeys` does), or look the digest up in a map (the digest of a
 *   high-entropy secret tells an attacker nothing).
 * - It returns the same caller object for the same key while the key is
 *   unchanged (the per-connection memo holds on to it; make one per key, not
 *   one per call: the request path allocates nothing for its caller).
 * - `epoch` changes (only ever grows) whenever the source's keys change (a
 *   key disabled, rotated, deleted, or past its expiry or grace: nothing
 *   else tells the memo that time ran out): callers remembered for a
 *   connection under an older epoch are checked again, so a revoked key
 *   stops working on connections that are already open.
 */
export interface CallerSource<C extends ApiCaller = ApiCaller> {
  /** True while the source holds any key: auth is on while any source has one. */
  readonly hasKeys: boolean;
  /** Grows whenever the source's keys change; a source whose keys never change keeps 0. */
  readonly epoch: number;
  /** The caller whose key has this SHA-256 digest (32 bytes), or undefined. */
  callerOf(digest: Buffer): C | undefined;
}

/** The SHA-256 digest of a key, as sources are asked about it (one-shot `crypto.hash`: about half the cost of `createHash()`). */
export function keyDigest(key: string): Buffer {
  return hash('sha256', key, 'buffer');
}

/**
 * Keys given at start (MANA_LLM_API_KEYS, the admin key): read-only, each a
 * caller named by its position, `<prefix>-1`, `<prefix>-2`, …, so that a key's
 * attribution says which entry of the variable it is without showing it.
 */
export class StaticKeys implements CallerSource {
  readonly epoch = 0;
  private readonly digests: readonly Buffer[];
  private readonly callers: readonly ApiCaller[];

  constructor(keys: readonly string[], prefix = 'env') {
    this.digests = keys.map(keyDigest);
    this.callers = keys.map((_, i) => Object.freeze({ id: `${prefix}-${i + 1}`, name: `${prefix}-${i + 1}` }));
  }

  get hasKeys(): boolean {
    return this.digests.length > 0;
  }

  /**
   * Every digest is compared (no early exit), so the timing does not tell
   * which key matched. A key listed twice is the caller of its first place.
   */
  callerOf(digest: Buffer): ApiCaller | undefined {
    let caller: ApiCaller | undefined;
    for (let i = 0; i < this.digests.length; i++) if (timingSafeEqual(this.digests[i]!, digest) && caller === undefined) caller = this.callers[i];
    return caller;
  }

  /** Every caller, in the variable's order (for listings). */
  list(): readonly ApiCaller[] {
    return this.callers;
  }
}
