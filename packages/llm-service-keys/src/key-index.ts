/**
 * The keys a replica checks presented keys against, in memory: no request
 * waits on a database. A check is one SHA-256 of the presented key (which the
 * gateway computes once for all its sources of keys) and one map lookup by
 * that digest: with 1,000 keys it costs what it costs with one. A map lookup
 * by digest reveals nothing through its timing: the digest of a high-entropy
 * secret tells an attacker nothing about any stored digest.
 *
 * Each key is in the map under its current digest and, while a rotation's
 * grace runs, its previous one. A disabled, expired or unknown key, a wrong
 * key and an old key past its grace are all the same answer, undefined: the
 * caller cannot tell them apart (no oracle).
 */
import { digestOfKey, parseKey } from './key-format.js';
import { isKeyActive, type KeyPriority, type StoredServiceKey } from './key-record.js';

/** What a key's requests are held to (the gateway enforces it). */
export interface KeyPolicy {
  /** The aliases and targets it may use; null: all. */
  readonly aliases: ReadonlySet<string> | null;
  readonly priority: KeyPriority | null;
  readonly maxConcurrency: number | null;
}

/**
 * Who a service key says is calling: its id and name (never a secret) and its
 * policy. One frozen object per key version, so a caller remembered for a
 * connection stays the same object until the key changes.
 */
export interface ServiceKeyCaller {
  readonly id: string;
  readonly name: string;
  readonly policy: KeyPolicy;
}

interface Entry {
  readonly key: StoredServiceKey;
  readonly caller: ServiceKeyCaller;
  /** Map keys (binary strings of the digests) this entry is filed under. */
  readonly current: string;
  readonly previous: string | undefined;
  /** Epoch ms until which `previous` is accepted (exclusive). */
  readonly previousValidUntil: number;
}

/** A digest as a map key: its 32 bytes as a 32-character binary string (cheaper than hex). */
const mapKey = (digest: Buffer): string => digest.toString('latin1');
const mapKeyOfHex = (hex: string): string => Buffer.from(hex, 'hex').toString('latin1');

function entryOf(key: StoredServiceKey): Entry {
  const { current, previous, previousValidUntil } = key.digests;
  const caller: ServiceKeyCaller = Object.freeze({
    id: key.id,
    name: key.name,
    policy: Object.freeze({
      aliases: key.aliases === null ? null : new Set(key.aliases),
      priority: key.priority,
      maxConcurrency: key.maxConcurrency,
    }),
  });
  return {
    key,
    caller,
    current: mapKeyOfHex(current),
    previous: previous === null ? undefined : mapKeyOfHex(previous),
    previousValidUntil: previous === null ? 0 : (previousValidUntil ?? 0),
  };
}

export class KeyIndex {
  private readonly byId = new Map<string, Entry>();
  private readonly byDigest = new Map<string, Entry>();

  constructor(keys: Iterable<StoredServiceKey> = []) {
    for (const key of keys) this.set(key);
  }

  get size(): number {
    return this.byId.size;
  }

  /** Adds or replaces a key (after a create, update or rotation). */
  set(key: StoredServiceKey): void {
    this.delete(key.id);
    const entry = entryOf(key);
    this.byId.set(key.id, entry);
    this.byDigest.set(entry.current, entry);
    if (entry.previous !== undefined) this.byDigest.set(entry.previous, entry);
  }

  delete(id: string): boolean {
    const entry = this.byId.get(id);
    if (entry === undefined) return false;
    this.byId.delete(id);
    if (this.byDigest.get(entry.current) === entry) this.byDigest.delete(entry.current);
    if (entry.previous !== undefined && this.byDigest.get(entry.previous) === entry) this.byDigest.delete(entry.previous);
    return true;
  }

  /** Replaces every key at once (a fresh read of the store). */
  replaceAll(keys: Iterable<StoredServiceKey>): void {
    this.byId.clear();
    this.byDigest.clear();
    for (const key of keys) this.set(key);
  }

  get(id: string): StoredServiceKey | undefined {
    return this.byId.get(id)?.key;
  }

  /** Every key, oldest first (ties by id). */
  all(): StoredServiceKey[] {
    return [...this.byId.values()].map((e) => e.key).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** The key other than `exceptId` that carries `name`, if any. */
  named(name: string, exceptId?: string): StoredServiceKey | undefined {
    for (const { key } of this.byId.values()) if (key.name === name && key.id !== exceptId) return key;
    return undefined;
  }

  /**
   * The caller of the key whose SHA-256 (`digestOfKey`, as 32 bytes) is
   * `digest`, if that key is active at `now` and the digest is its current
   * one or its previous one within the grace.
   */
  callerOf(digest: Buffer, now: number = Date.now()): ServiceKeyCaller | undefined {
    const entry = this.entryOf(digest, now);
    return entry?.caller;
  }

  /** The stored key a presented key string authenticates as at `now` (malformed strings are refused unhashed). */
  lookup(presented: string, now: number = Date.now()): StoredServiceKey | undefined {
    if (parseKey(presented) === undefined) return undefined;
    return this.entryOf(Buffer.from(digestOfKey(presented), 'hex'), now)?.key;
  }

  /**
   * The first moment after `now` at which some key's answer changes by
   * itself (an expiry, the end of a grace); Infinity when none will.
   */
  nextChange(now: number): number {
    let next = Infinity;
    for (const { key, previous, previousValidUntil } of this.byId.values()) {
      if (key.expiresAt !== null && key.expiresAt > now && key.expiresAt < next) next = key.expiresAt;
      if (previous !== undefined && previousValidUntil > now && previousValidUntil < next) next = previousValidUntil;
    }
    return next;
  }

  private entryOf(digest: Buffer, now: number): Entry | undefined {
    if (digest.length !== 32) return undefined;
    const mk = mapKey(digest);
    const entry = this.byDigest.get(mk);
    if (entry === undefined || !isKeyActive(entry.key, now)) return undefined;
    if (mk === entry.current) return entry;
    return now < entry.previousValidUntil ? entry : undefined;
  }
}
