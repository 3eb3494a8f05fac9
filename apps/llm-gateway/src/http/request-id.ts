/**
 * X-Request-Id: echo the client's id when it is sane, else generate one.
 */
import { randomUUID } from 'node:crypto';

const SAFE_ID = /^[\w.:/+=@-]{1,128}$/;

export function requestIdOf(header: string | string[] | undefined): string {
  if (typeof header === 'string' && SAFE_ID.test(header)) return header;
  return randomUUID();
}
