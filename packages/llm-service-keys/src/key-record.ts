/**
 * A service key's record: what the store keeps and the admin API shows
 * (times as epoch ms here, ISO 8601 on the wire), plus the digests, which
 * only the store and the index ever see.
 */

/** The priorities a key may give its requests (the gateway's X-Mana-LLM-Priority values). */
export const KEY_PRIORITIES = ['realtime', 'background'] as const;
export type KeyPriority = (typeof KEY_PRIORITIES)[number];

/** What an admin can set on a key (validated by key-fields.ts). */
export interface KeySettings {
  /** The consuming service, e.g. `mana-api`: 1–64 of [a-z0-9._-], unique among keys. */
  readonly name: string;
  readonly description: string | null;
  /** Epoch ms after which the key is refused; null: never. */
  readonly expiresAt: number | null;
  readonly disabled: boolean;
  /** Aliases and direct targets the key may use; null: all. */
  readonly aliases: readonly string[] | null;
  /** The priority of its requests that send no X-Mana-LLM-Priority; null: the gateway's default. */
  readonly priority: KeyPriority | null;
  /** In-flight requests of this key per replica; null: no limit. */
  readonly maxConcurrency: number | null;
}

/**
 * The digests a presented secret is compared with: the current one and,
 * for a grace period after a rotation, the one before it.
 */
export interface KeyDigests {
  /** SHA-256 of the current key (`digestOfKey`), 64 hex digits. */
  readonly current: string;
  /** SHA-256 of the key before the last rotation; null when none is in grace. */
  readonly previous: string | null;
  /** Epoch ms until which `previous` is accepted (exclusive); null with `previous`. */
  readonly previousValidUntil: number | null;
}

export interface ServiceKey extends KeySettings {
  /** Stable public id (12 hex digits), part of the key itself. */
  readonly id: string;
  readonly createdAt: number;
  /** Approximate (written in the background); null: never used. */
  readonly lastUsedAt: number | null;
}

export interface StoredServiceKey extends ServiceKey {
  readonly digests: KeyDigests;
}

/** A key as the admin API shows it: snake_case, ISO times, never a digest or a secret. */
export interface ServiceKeyJson {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly created_at: string;
  readonly last_used_at: string | null;
  readonly expires_at: string | null;
  readonly disabled: boolean;
  readonly aliases: readonly string[] | null;
  readonly priority: KeyPriority | null;
  readonly max_concurrency: number | null;
  /** Until when the secret before the last rotation is still accepted; null when none is. */
  readonly previous_secret_valid_until: string | null;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** The public view of a stored key at `now` (a grace that has ended shows as null). */
export function serviceKeyJson(key: StoredServiceKey, now: number = Date.now()): ServiceKeyJson {
  const { previousValidUntil } = key.digests;
  return {
    id: key.id,
    name: key.name,
    description: key.description,
    created_at: iso(key.createdAt)!,
    last_used_at: iso(key.lastUsedAt),
    expires_at: iso(key.expiresAt),
    disabled: key.disabled,
    aliases: key.aliases,
    priority: key.priority,
    max_concurrency: key.maxConcurrency,
    previous_secret_valid_until: previousValidUntil !== null && previousValidUntil > now ? iso(previousValidUntil) : null,
  };
}

/** True when the key may authenticate at `now` (not disabled, not expired). */
export function isKeyActive(key: KeySettings, now: number): boolean {
  return !key.disabled && (key.expiresAt === null || now < key.expiresAt);
}
