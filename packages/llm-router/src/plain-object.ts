/**
 * A JSON object (not null, not an array): the shape request bodies, upstream
 * answers and config sections are checked for. The one copy of this check;
 * the gateway imports it from here.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
