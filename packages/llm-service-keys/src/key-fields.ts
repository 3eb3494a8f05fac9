/**
 * The fields an admin sets on a service key, declared once: their wire name,
 * the record property, whether null is allowed (null clears it), the check of
 * a value and its description (for error messages and the docs' table).
 * A create and a merge patch are both read through this table, so a field's
 * rule cannot differ between the two.
 *
 * Whether an alias in `aliases` exists is the gateway's to check (it knows the
 * config); here an alias is only a well-formed string.
 */
import { KEY_PRIORITIES, type KeySettings } from './key-record.js';

export const MAX_NAME_LENGTH = 64;
export const MAX_DESCRIPTION_LENGTH = 1_000;
export const MAX_CONCURRENCY = 10_000;
/** Entries of an allow-list: far more than any config has aliases and targets. */
export const MAX_ALIASES = 1_000;
/** Characters of one allow-list entry (the gateway's longest model id is shorter). */
export const MAX_ALIAS_LENGTH = 512;

export const KEY_NAME = /^[a-z0-9._-]{1,64}$/;
/** The names the gateway gives its static MANA_LLM_API_KEYS keys (`env-1`, `env-2`, …). */
export const STATIC_KEY_NAME = /^env-[0-9]+$/;
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

export type KeyFieldReason = 'invalid_body' | 'unknown_field' | 'missing_field' | 'invalid_value';

/** A refused create or patch body, naming the field (`param`) and why. */
export class KeyFieldError extends Error {
  override readonly name = 'KeyFieldError';
  constructor(
    readonly reason: KeyFieldReason,
    readonly param: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

export function isKeyFieldError(error: unknown): error is KeyFieldError {
  return error instanceof Error && error.name === 'KeyFieldError' && 'reason' in error;
}

type Settable = keyof KeySettings;

interface FieldSpec<P extends Settable> {
  readonly property: P;
  /** Accepts null (clearing the field) besides a value. */
  readonly nullable: boolean;
  /** Set when a create does not name the field. */
  readonly default?: KeySettings[P];
  /** What a valid value is, for people (error messages, docs). */
  readonly rule: string;
  /** The value, or undefined when it is not valid. */
  parse(value: unknown): Exclude<KeySettings[P], null> | undefined;
}

function spec<P extends Settable>(s: FieldSpec<P>): FieldSpec<P> {
  return s;
}

function keyName(value: unknown): string | undefined {
  return typeof value === 'string' && KEY_NAME.test(value) && !STATIC_KEY_NAME.test(value) ? value : undefined;
}

function description(value: unknown): string | undefined {
  return typeof value === 'string' && value.length <= MAX_DESCRIPTION_LENGTH && !CONTROL_CHARS.test(value) ? value : undefined;
}

function isoTime(value: unknown): number | undefined {
  if (typeof value !== 'string' || !ISO_TIME.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

function aliasList(value: unknown): readonly string[] | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_ALIASES) return undefined;
  const seen = new Set<string>();
  for (const entry of value) {
    if (typeof entry !== 'string' || entry.trim() !== entry || entry === '' || entry.length > MAX_ALIAS_LENGTH || CONTROL_CHARS.test(entry)) return undefined;
    seen.add(entry);
  }
  return Object.freeze([...seen]);
}

/** The settable fields by wire name, in the order the docs list them. */
export const KEY_FIELDS = {
  name: spec({
    property: 'name',
    nullable: false,
    rule: `1 to ${MAX_NAME_LENGTH} characters of a-z, 0-9, ".", "_" and "-", unique among keys; env-<n> is reserved for MANA_LLM_API_KEYS`,
    parse: keyName,
  }),
  description: spec({
    property: 'description',
    nullable: true,
    default: null,
    rule: `text of at most ${MAX_DESCRIPTION_LENGTH} characters without control characters (no newlines); stored and shown as text`,
    parse: description,
  }),
  expires_at: spec({
    property: 'expiresAt',
    nullable: true,
    default: null,
    rule: 'an ISO 8601 time with a time zone (e.g. 2027-01-01T00:00:00Z); from then on the key is refused; null: never',
    parse: isoTime,
  }),
  disabled: spec({
    property: 'disabled',
    nullable: false,
    default: false,
    rule: 'true or false; a disabled key is refused like an unknown one',
    parse: (value) => (typeof value === 'boolean' ? value : undefined),
  }),
  aliases: spec({
    property: 'aliases',
    nullable: true,
    default: null,
    rule: `a non-empty list (at most ${MAX_ALIASES}) of configured aliases or provider/model targets the key may use; null: all`,
    parse: aliasList,
  }),
  priority: spec({
    property: 'priority',
    nullable: true,
    default: null,
    rule: `${KEY_PRIORITIES.join(' or ')}: the priority of its requests that send no X-Mana-LLM-Priority; null: the gateway's default`,
    parse: (value) => (KEY_PRIORITIES as readonly unknown[]).includes(value) ? (value as (typeof KEY_PRIORITIES)[number]) : undefined,
  }),
  max_concurrency: spec({
    property: 'maxConcurrency',
    nullable: true,
    default: null,
    rule: `a whole number from 1 to ${MAX_CONCURRENCY}: requests of this key in flight at once on one replica; null: no limit`,
    parse: (value) => (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_CONCURRENCY ? value : undefined),
  }),
} as const;

export type KeyFieldName = keyof typeof KEY_FIELDS;
export const KEY_FIELD_NAMES = Object.keys(KEY_FIELDS) as KeyFieldName[];

function bodyObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new KeyFieldError('invalid_body', undefined, 'The body must be a JSON object.');
  }
  const record = body as Record<string, unknown>;
  for (const field of Object.keys(record)) {
    if (!Object.hasOwn(KEY_FIELDS, field)) {
      throw new KeyFieldError('unknown_field', field.slice(0, 100), `Unknown field "${field.slice(0, 100)}"; a key has ${KEY_FIELD_NAMES.join(', ')}.`);
    }
  }
  return record;
}

/** The value of `field` in a body, null where allowed, or a KeyFieldError naming the field and its rule. */
function valueOf<F extends KeyFieldName>(field: F, value: unknown): KeySettings[(typeof KEY_FIELDS)[F]['property']] {
  const s = KEY_FIELDS[field] as FieldSpec<(typeof KEY_FIELDS)[F]['property']>;
  if (value === null && s.nullable) return null as KeySettings[(typeof KEY_FIELDS)[F]['property']];
  const parsed = s.parse(value);
  if (parsed === undefined) throw new KeyFieldError('invalid_value', field, `${field} must be ${s.rule}${s.nullable ? ' (or null)' : ''}.`);
  return parsed;
}

/** Reads `body` over `base`: each field named in it replaces the base's value. */
function applyFields(base: Partial<Record<Settable, unknown>>, body: Record<string, unknown>): KeySettings {
  const settings: Record<string, unknown> = { ...base };
  for (const field of KEY_FIELD_NAMES) {
    if (Object.hasOwn(body, field)) settings[KEY_FIELDS[field].property] = valueOf(field, body[field]);
  }
  return settings as unknown as KeySettings;
}

/** The settings of a new key from a create body (`name` required, the rest defaulted). */
export function settingsFromCreate(body: unknown): KeySettings {
  const fields = bodyObject(body);
  if (!Object.hasOwn(fields, 'name')) throw new KeyFieldError('missing_field', 'name', `name is required: ${KEY_FIELDS.name.rule}.`);
  const defaults: Partial<Record<Settable, unknown>> = {};
  for (const field of KEY_FIELD_NAMES) {
    const s = KEY_FIELDS[field] as FieldSpec<Settable>;
    if (s.default !== undefined) defaults[s.property] = s.default;
  }
  return applyFields(defaults, fields);
}

/** `current` with a merge patch applied: a field absent stays, a field set replaces, null clears (where allowed). */
export function settingsFromPatch(current: KeySettings, body: unknown): KeySettings {
  return applyFields(settingsOf(current), bodyObject(body));
}

/** Only the settable fields of `key` (a record carries more). */
export function settingsOf(key: KeySettings): KeySettings {
  const settings: Record<string, unknown> = {};
  for (const field of KEY_FIELD_NAMES) settings[KEY_FIELDS[field].property] = key[KEY_FIELDS[field].property];
  return settings as unknown as KeySettings;
}
