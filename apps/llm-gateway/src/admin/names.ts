/**
 * Resource names taken from a URL path (`/admin/aliases/{name}`). Alias names
 * contain a real `/` (`mana/long-form`), so the name is the rest of the path;
 * an encoded slash (`%2F`), a `..` segment, control characters or an
 * over-long name is refused with 400 invalid_name before anything is read.
 */
import { ALIAS_NAME, FOREIGN_ALIAS_NAME, PROVIDER_NAME } from '@mana/llm-router';
import { AdminFailure } from './admin-failure.js';

/** Longest name accepted in a path: 200 characters (as the loader allows). */
const MAX_NAME_LENGTH = 200;

export type ResourceKind = 'alias' | 'provider';

/** The decoded name of a path remainder, or an AdminFailure('invalid_name'). */
export function nameFromPath(raw: string, kind: ResourceKind): string {
  const shown = raw.slice(0, 60);
  if (raw.length === 0) throw new AdminFailure('invalid_name', `The path needs a ${kind} name.`);
  if (raw.length > MAX_NAME_LENGTH * 3) throw new AdminFailure('invalid_name', `The ${kind} name is longer than ${MAX_NAME_LENGTH} characters.`);
  if (/%2f|%5c/i.test(raw)) throw new AdminFailure('invalid_name', `The ${kind} name "${shown}" contains an encoded slash; write / as is.`);
  let name: string;
  try {
    name = decodeURIComponent(raw);
  } catch {
    throw new AdminFailure('invalid_name', `The ${kind} name "${shown}" is not valid percent-encoding.`);
  }
  checkName(name, kind);
  return name;
}

/** Throws invalid_name unless `name` is a name the loader accepts for `kind`. */
export function checkName(name: string, kind: ResourceKind): void {
  const printable = name.replace(/[\x00-\x1f\x7f]/g, '?').slice(0, 60);
  if (name.length > MAX_NAME_LENGTH) throw new AdminFailure('invalid_name', `The ${kind} name is longer than ${MAX_NAME_LENGTH} characters.`);
  if (name.split('/').some((segment) => segment === '..' || segment === '.')) {
    throw new AdminFailure('invalid_name', `The ${kind} name "${printable}" contains a . or .. segment.`);
  }
  const ok = kind === 'alias' ? (name.startsWith('mana/') ? ALIAS_NAME : FOREIGN_ALIAS_NAME).test(name) : PROVIDER_NAME.test(name) && name !== 'mana';
  if (!ok) {
    const rule =
      kind === 'alias'
        ? 'mana/ + lowercase letters, digits, . _ - ; or up to 200 letters, digits and . _ : @ + / -'
        : 'lowercase letters, digits, - and _ (not "mana")';
    throw new AdminFailure('invalid_name', `The ${kind} name "${printable}" is not valid: use ${rule}.`);
  }
}
