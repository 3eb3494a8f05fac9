/**
 * `${VAR}` and `${VAR:-default}` in config strings, as in a shell or compose
 * file, so secrets and per-machine URLs stay in the environment, not the file.
 * An unset variable without a default becomes the empty string; `:-` also
 * applies the default when the variable is set but empty. `$${` is a literal `${`.
 *
 * Expanded only where a secret or an address belongs (a provider's api_key,
 * headers, base_url, options) and in values of a fixed form (settings,
 * strategies): never in text the gateway shows to clients (descriptions,
 * targets, embedding spaces), which would publish a variable's value.
 */

export type Env = Readonly<Record<string, string | undefined>>;

export interface Interpolated {
  readonly value: string;
  /** The variables the string referred to, e.g. `['GROQ_API_KEY']` (for "missing key" messages). */
  readonly variables: readonly string[];
}

/** One `${VAR}` or `${VAR:-default}`: the grammar the expansion below and `envReferenceName` share. */
const ONE_REFERENCE = String.raw`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`;
const REFERENCE = new RegExp(String.raw`\$\$\{|${ONE_REFERENCE}`, 'g');
const WHOLE_REFERENCE = new RegExp(`^${ONE_REFERENCE}$`);

/**
 * The variable a config value comes from when the whole value is one
 * reference, `${VAR}` or `${VAR:-default}`; undefined for anything else (a
 * literal, or text around a reference). Tools that must tell a key kept in
 * the environment from a key written into the file (redaction, the admin
 * API) ask this, so they agree with what the loader expands.
 */
export function envReferenceName(text: string): string | undefined {
  return WHOLE_REFERENCE.exec(text)?.[1];
}

/** The variables `text` refers to (`$${` escapes are not references), in order. */
export function envReferences(text: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(REFERENCE)) if (match[1] !== undefined) names.push(match[1]);
  return names;
}

export function interpolateEnv(text: string, env: Env): Interpolated {
  const variables: string[] = [];
  const value = text.replace(REFERENCE, (whole, name: string | undefined, fallback: string | undefined) => {
    if (name === undefined) return '${'; // `$${` escape
    variables.push(name);
    const current = env[name];
    if (fallback !== undefined) return current === undefined || current === '' ? fallback : current;
    return current ?? '';
  });
  return { value, variables };
}

/** Interpolates every string inside a plain value (used for provider `options` and `headers`). */
export function interpolateDeep(value: unknown, env: Env): unknown {
  if (typeof value === 'string') return interpolateEnv(value, env).value;
  if (Array.isArray(value)) return value.map((item) => interpolateDeep(item, env));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, interpolateDeep(item, env)]));
  }
  return value;
}
