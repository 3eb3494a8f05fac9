/**
 * The API keys as the pages name them. Usage records carry a key's id
 * (`key_id`: `env-1`, or a service key's 12 hex digits) and a summary by key
 * carries only the id; the keys listing (GET /admin/keys) says what each id
 * is called. This file is the only place the dashboard learns which keys
 * there are and what to call one: the key filter, the by-key rows and the
 * Keys page all read them through it.
 */
import { get, query } from './api.js';
import type { AdminKey, Summary } from './types.js';
import { WINDOWS } from './usage-series.js';
import { usePoll } from './use-poll.js';

/** The listed keys and what an id reads as. */
export interface KeyNames {
  /** Every key of the listing: the static ones first, then the service keys, oldest first. */
  readonly listed: readonly AdminKey[];
  /** What a key id reads as: the listed key's name, else the id itself (a deleted key), or why there is none. */
  label(id: string | null | undefined): string;
}

export function keyNames(listed: readonly AdminKey[]): KeyNames {
  const byId = new Map(listed.map((key) => [key.id, key.name]));
  return {
    listed,
    label: (id) => (id === null || id === undefined ? '(no key)' : (byId.get(id) ?? id)),
  };
}

/** Until the listing has loaded (or when it fails), ids read as themselves. */
export const UNNAMED_KEYS: KeyNames = keyNames([]);

export async function listKeys(signal?: AbortSignal): Promise<AdminKey[]> {
  return (await get<{ data: AdminKey[] }>('/admin/keys', signal)).data;
}

export async function loadKeyNames(signal: AbortSignal): Promise<KeyNames> {
  return keyNames(await listKeys(signal));
}

/**
 * The key ids to offer in a key filter: every listed key, then the keys that
 * made requests in the longest window the pages show (7 d) and are no longer
 * listed (deleted ones, still in the usage records), by id.
 */
export function filterableKeyIds(names: KeyNames, seen: readonly string[]): string[] {
  const listed = names.listed.map((key) => key.id);
  const isListed = new Set(listed);
  return [...listed, ...seen.filter((id) => !isListed.has(id)).sort((a, b) => a.localeCompare(b))];
}

/** The ids of the keys that made requests in the last 7 d (a summary by key). */
export async function seenKeyIds(signal: AbortSignal, now = Date.now()): Promise<string[]> {
  const longest = WINDOWS[WINDOWS.length - 1]!;
  const summary = await get<Summary>(`/admin/usage/summary${query({ group_by: 'key', since: now - longest.spanMs })}`, signal);
  return summary.data.map((row) => row.key).filter((id): id is string => typeof id === 'string');
}

/** The listing, loaded once when a page opens; ids read as themselves until it arrives. */
export function useKeyNames(): KeyNames {
  return usePoll((signal) => loadKeyNames(signal), null, []).data ?? UNNAMED_KEYS;
}
