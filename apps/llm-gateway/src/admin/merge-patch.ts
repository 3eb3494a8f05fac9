/**
 * JSON merge patch (RFC 7396): objects merge key by key, `null` deletes a key,
 * anything else (arrays included) replaces. A chain is therefore reordered or
 * reweighted by sending the whole new chain.
 */
import { isPlainObject } from '../plain-object.js';
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = applyMergePatch(out[key], value);
  }
  return out;
}

