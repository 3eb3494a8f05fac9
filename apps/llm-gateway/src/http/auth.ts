/**
 * Bearer key checks. Keys are compared as SHA-256 digests with
 * `timingSafeEqual`, so neither the key's content nor its length leaks through
 * response timing. Keys are never logged or echoed.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

export type AuthResult = 'ok' | 'missing' | 'invalid';

function digest(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : undefined;
}

export class KeyChecker {
  private readonly digests: readonly Buffer[];

  constructor(keys: readonly string[]) {
    this.digests = keys.map(digest);
  }

  /** True when any key is set (auth on). */
  get enabled(): boolean {
    return this.digests.length > 0;
  }

  check(authorization: string | undefined): AuthResult {
    const token = bearerToken(authorization);
    if (token === undefined) return 'missing';
    const presented = digest(token);
    let ok = false;
    // Compare against every key (no early exit) so timing does not reveal which matched.
    for (const d of this.digests) if (timingSafeEqual(d, presented)) ok = true;
    return ok ? 'ok' : 'invalid';
  }
}
