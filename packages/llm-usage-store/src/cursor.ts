/**
 * Keyset cursors on (ts, id), shared by every newest-first listing: opaque to
 * clients, and a cursor this API did not return is a 400, never a 500.
 */
import { UsageQueryError } from './usage-query-error.js';

export function encodeCursor(ts: number, id: string): string {
  return Buffer.from(`${ts}:${id}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): { ts: number; id: string } {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const colon = text.indexOf(':');
  const ts = Number(text.slice(0, colon));
  const id = text.slice(colon + 1);
  if (colon < 1 || !Number.isSafeInteger(ts) || id.length === 0 || id.length > 64) {
    throw new UsageQueryError('cursor is not one this API returned.', 'cursor');
  }
  return { ts, id };
}
