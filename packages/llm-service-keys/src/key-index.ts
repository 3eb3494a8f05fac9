/**
 * The keys a replica checks presented keys against, in memory: no request
 * waits on a database. A lookup is one parse, one SHA-256 of the presented
 * secret and one map lookup by the key's public id, then `timingSafeEqual`
 * against the current digest and the previous one (always both, so timing does
 * not say which matched or whether a grace is running): with 1,000 keys it
 * costs what it costs with one.
 *
 * A disabled, expired or unknown key and a wrong secret are all the same
 * answer, undefined: the caller cannot tell them apart (no oracle).
 */
import { timingSafeEqual } from 'node:crypto';
import { digestOfSecret, parseKey } from './key-format.js';
import { isKeyActive, type StoredServiceKey } from './key-record.js';

interface Entry {
  readonly key: StoredServiceKey;
  readonly current: Buffer;
  /** The previous digest, or a digest no secret has (so the comparison still runs) when none. */
  readonly previous: Buffer;
  readonly previousValidUntil: number;
}

/** 32 bytes no SHA-256 output is expected to equal: compared against when a key has no previous digest. */
const NO_DIGEST = Buffer.alloc(32, 0);

function entryOf(key: StoredServiceKey): Entry {
  const { current, previous, previousValidUntil } = key.digests;
  return {
    key,
    current: Buffer.from(current, 'hex'),
    previous: previous === null ? NO_DIGEST : Buffer.from(previous, 'hex'),
    previousValidUntil: previous === null ? 0 : (previousValidUntil ?? 0),
  };
}

function equalDigests(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

export class KeyIndex {
  private readonly byId = new Map<string, Entry>();

  constructor(keys: Iterable<StoredServiceKey> = []) {
    for (const key of keys) this.set(key);
  }

  get size(): number {
    return this.byId.size;
  }

  /** Adds or replaces a key (after a create, update or rotation). */
  set(key: StoredServiceKey): void {
    this.byId.set(key.id, entryOf(key));
  }

  delete(id: string): boolean {
    return this.byId.delete(id);
  }

  /** Replaces every key at once (a fresh read of the store). */
  replaceAll(keys: Iterable<StoredServiceKey>): void {
    this.byId.clear();
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
   * The active key a presented key string authenticates as at `now`, or
   * undefined (malformed, unknown, wrong secret, disabled, expired, or an old
   * secret whose grace has ended).
   */
  lookup(presented: string, now: number = Date.now()): StoredServiceKey | undefined {
    const parsed = parseKey(presented);
    if (parsed === undefined) return undefined;
    const digest = Buffer.from(digestOfSecret(parsed.secret), 'hex');
    const entry = this.byId.get(parsed.id);
    if (entry === undefined) return undefined;
    const matchesCurrent = equalDigests(entry.current, digest);
    const matchesPrevious = equalDigests(entry.previous, digest);
    const accepted = matchesCurrent || (matchesPrevious && now < entry.previousValidUntil);
    return accepted && isKeyActive(entry.key, now) ? entry.key : undefined;
  }
}
