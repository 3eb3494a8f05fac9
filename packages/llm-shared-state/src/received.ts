/**
 * What arrives from PostgreSQL (a NOTIFY payload, a row) is checked before
 * any of it is used. Anyone who can connect can NOTIFY, with no table
 * privileges at all: one transition with `until: 1e300` or a non-string
 * reason used to be an uncaught exception on every replica at once. A value
 * that fails a check is dropped; the SharedState counts it and reports it
 * (at most once a minute).
 */
export type Received<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

/** Longest replica name accepted: a host name (up to 253) and a port. */
export const MAX_REPLICA_CHARS = 300;

export function accept<T>(value: T): Received<T> {
  return { ok: true, value };
}

/** `problem` names the field and what it should be, never the value (it may be anything, of any size). */
export function refuse<T>(problem: string): Received<T> {
  return { ok: false, problem };
}

export function isReplicaName(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_REPLICA_CHARS;
}

/** JSON text to a value; undefined when it is not JSON. */
export function parseJson(payload: string): unknown {
  try {
    return JSON.parse(payload) as unknown;
  } catch {
    return undefined;
  }
}
