/** A JSON object (not null, not an array): the shape every request body and config section is checked for. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
