/**
 * The API keys the pages filter and group by. Usage records carry a key's id
 * (`key_id`, e.g. `env-1`) and name (`key_name`); a summary by key carries
 * only the id. The two functions here are the only places the dashboard
 * learns which keys there are and what to call one, so a listing of the keys
 * (GET /admin/keys) can replace them without touching a page.
 */
import { get, query } from './api.js';
import type { Summary } from './types.js';
import { WINDOWS } from './usage-series.js';

/** What a summary row's key reads as: its id (no listing maps ids to names yet), or why there is none. */
export function keyLabel(id: string | null | undefined): string {
  return id ?? '(no key)';
}

/**
 * The key ids to offer in a key filter: the keys that made requests in the
 * longest window the pages show (7 d), sorted. A key with no traffic there
 * has no requests to filter to.
 */
export async function knownKeyIds(signal: AbortSignal, now = Date.now()): Promise<string[]> {
  const longest = WINDOWS[WINDOWS.length - 1]!;
  const summary = await get<Summary>(`/admin/usage/summary${query({ group_by: 'key', since: now - longest.spanMs })}`, signal);
  return summary.data
    .map((row) => row.key)
    .filter((id): id is string => typeof id === 'string')
    .sort((a, b) => a.localeCompare(b));
}
