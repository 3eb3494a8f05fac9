import type { Settings } from '../types.js';
import type { ConfigPath, ConfigSource } from './config-source.js';
import { parseDuration } from './durations.js';
import { parseSize } from './sizes.js';
import { envReferences, interpolateEnv, type Env, type Interpolated } from './interpolate.js';
import { isPlainObject } from '../plain-object.js';
import { SETTING_SPECS } from './schema.js';

export type RawMap = Record<string, unknown>;

/**
 * Typed reads from the parsed YAML. Each read either returns a valid value or
 * fails through the source with the path's line and the alias in question.
 */
export class ConfigReader {
  constructor(
    readonly source: ConfigSource,
    readonly env: Env,
  ) {}

  fail(path: ConfigPath, message: string, alias?: string, atKey = false): never {
    return this.source.fail(path, message, { alias, atKey });
  }

  map(value: unknown, path: ConfigPath, what: string, alias?: string): RawMap {
    if (!isPlainObject(value)) {
      this.fail(path, `${what} must be a map of key: value`, alias);
    }
    return value as RawMap;
  }

  /** Rejects any key not in `allowed`, naming it and the keys that are valid there. */
  keys(map: RawMap, allowed: readonly string[], path: ConfigPath, what: string, alias?: string): void {
    for (const key of Object.keys(map)) {
      if (!allowed.includes(key)) {
        this.fail([...path, key], `unknown key "${key}" in ${what} (allowed: ${allowed.join(', ')})`, alias, true);
      }
    }
  }

  /** A string with `${VAR}` interpolated; numbers are accepted as their text. */
  string(value: unknown, path: ConfigPath, what: string, alias?: string): Interpolated {
    if (typeof value === 'number') return { value: String(value), variables: [] };
    if (typeof value !== 'string') this.fail(path, `${what} must be a string`, alias);
    return interpolateEnv(value, this.env);
  }

  /**
   * A string taken as written, `${VAR}` included: for text the gateway shows
   * to clients (a description), where an expanded variable would be published
   * (see interpolate.ts). Numbers are accepted as their text.
   */
  text(value: unknown, path: ConfigPath, what: string, alias?: string): string {
    if (typeof value === 'number') return String(value);
    if (typeof value !== 'string') this.fail(path, `${what} must be a string`, alias);
    return value;
  }

  /**
   * An identifier taken as written (a target, an embedding space): shown to
   * clients, so never expanded, and a `${VAR}` in it is refused rather than
   * kept as text: a config that once expanded it must not route to a model
   * named `${MODEL}`. The message quotes the value as written.
   */
  identifier(value: unknown, path: ConfigPath, what: string, alias?: string): string {
    const text = this.text(value, path, what, alias);
    if (envReferences(text).length > 0) {
      this.fail(
        path,
        `${what} ${text.slice(0, 120).replace(/[\x00-\x1f\x7f]/g, '?')}: \${VAR} is not expanded in ${/^[aeiou]/.test(what) ? 'an' : 'a'} ${what} (only in a provider's api_key, headers, base_url and options, and in settings); write the value itself`,
        alias,
      );
    }
    return text;
  }

  /**
   * A value as a message may quote it: the interpolated text when it came from
   * the file alone, the text *as written* (`"\${MYKEY}"`) when it used the
   * environment — a variable's value may be a secret and never enters a message.
   */
  shown(raw: unknown, read: Interpolated): string {
    return read.variables.length === 0 ? read.value : String(raw);
  }

  boolean(value: unknown, path: ConfigPath, what: string, alias?: string): boolean {
    if (typeof value === 'boolean') return value;
    const text = typeof value === 'string' ? interpolateEnv(value, this.env).value.trim() : undefined;
    if (text === 'true') return true;
    if (text === 'false') return false;
    return this.fail(path, `${what} must be true or false`, alias);
  }

  /** A whole number ≥ min (strings allowed so `${RETRIES:-0}` works). */
  count(value: unknown, path: ConfigPath, what: string, min: number, alias?: string): number {
    const text = typeof value === 'string' ? interpolateEnv(value, this.env).value.trim() : undefined;
    const number = typeof value === 'number' ? value : text !== undefined && /^\d+$/.test(text) ? Number(text) : NaN;
    if (!Number.isInteger(number) || number < min) {
      this.fail(path, `${what} must be a whole number ≥ ${min}, got ${JSON.stringify(value)}`, alias);
    }
    return number;
  }

  duration(value: unknown, path: ConfigPath, what: string, positive: boolean, alias?: string): number {
    const text = typeof value === 'string' ? interpolateEnv(value, this.env).value : value;
    const ms = parseDuration(text);
    if (ms === undefined || (positive && ms === 0)) {
      const shape = positive ? 'a positive duration' : 'a duration';
      this.fail(path, `${what} must be ${shape} such as "30s", "500ms", "2m", "1h" or a number of ms, got ${JSON.stringify(value)}`, alias);
    }
    return ms;
  }

  /** A positive size in bytes: a whole number, or with a unit (`64kb`, `32mb`, `1gb`; binary multiples). */
  size(value: unknown, path: ConfigPath, what: string, alias?: string): number {
    const text = typeof value === 'string' ? interpolateEnv(value, this.env).value : typeof value === 'number' ? String(value) : undefined;
    const bytes = text === undefined ? undefined : parseSize(text);
    if (bytes === undefined) this.fail(path, `${what} must be a positive size such as "64kb", "32mb" or a number of bytes, got ${JSON.stringify(value)}`, alias);
    return bytes;
  }

  /** A `settings:` block → the fields it overrides (absent keys stay undefined). */
  settings(value: unknown, path: ConfigPath, alias?: string): Partial<Settings> {
    if (value === undefined || value === null) return {};
    const map = this.map(value, path, 'settings', alias);
    this.keys(map, Object.keys(SETTING_SPECS), path, 'settings', alias);
    const result: Partial<Settings> = {};
    for (const [key, raw] of Object.entries(map)) {
      const spec = SETTING_SPECS[key];
      if (spec === undefined) continue; // unreachable: keys() rejected it
      const at = [...path, key];
      const what = `settings.${key}`;
      // One field per spec: the value read is of that field's type.
      (result as Record<string, unknown>)[spec.field] =
        spec.kind === 'duration'
          ? this.duration(raw, at, what, spec.positive === true, alias)
          : spec.kind === 'size'
            ? this.size(raw, at, what, alias)
            : spec.kind === 'choice'
              ? this.choice(raw, at, what, spec.choices, alias)
              : this.count(raw, at, what, spec.min, alias);
    }
    return result;
  }

  /** One of `choices` (`${VAR}` expanded); a message quotes another value as written (see `shown`). */
  choice(value: unknown, path: ConfigPath, what: string, choices: readonly string[], alias?: string): string {
    const read = this.string(value, path, what, alias);
    const text = read.value.trim();
    if (!choices.includes(text)) this.fail(path, `unknown ${what} "${this.shown(value, read)}" (known: ${choices.join(', ')})`, alias);
    return text;
  }
}
