/**
 * The service key operations of the admin API: list, get, create, patch,
 * delete, rotate. Field rules are the package's (`KEY_FIELDS` of
 * @mana/llm-service-keys); what only the gateway knows is checked here: that
 * every entry of `aliases` is a configured alias or a provider/model target
 * of a configured provider, and that the `env-<n>` keys of MANA_LLM_API_KEYS
 * are read-only.
 *
 * A secret appears in exactly two answers, a create's and a rotation's
 * (`key`), and nowhere else: not in a listing, a log line or an error.
 */
import {
  DEFAULT_ROTATION_GRACE_MS,
  MAX_ROTATION_GRACE_MS,
  isKeyFieldError,
  isKeyId,
  issueKey,
  rotateKey,
  serviceKeyJson,
  settingsFromCreate,
  settingsFromPatch,
  type KeySettings,
  type StoredServiceKey,
} from '@mana/llm-service-keys';
import type { ServiceKeyWrite } from '@mana/llm-usage-store';
import { parseDuration, splitTarget, type ConfigSnapshot } from '@mana/llm-router';
import { ALIAS_NAMESPACE } from '@mana/llm-aliases';
import type { GatewayErrorCode } from '../http/errors.js';
import { isPlainObject } from '../plain-object.js';
import { STATIC_KEY_ID, staticKeyId, type ServiceKeys } from '../keys/service-keys.js';
import { AdminFailure, isAdminFailure } from './admin-failure.js';

/**
 * The most service keys a gateway holds: every replica keeps them all in
 * memory and each name may become a label value of
 * mana_llm_key_requests_total, so their number has a bound.
 */
export const MAX_SERVICE_KEYS = 10_000;

export interface KeyAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** What the operations need from the gateway. */
export interface KeyContext {
  readonly keys: ServiceKeys;
  /** The config whose aliases and providers an allow-list is checked against. */
  readonly config: () => ConfigSnapshot;
  /** PostgreSQL (shared by replicas) or the embedded SQLite file: names the 503. */
  readonly shared: boolean;
}

const FIELD_CODES = {
  invalid_body: 'invalid_request',
  unknown_field: 'unknown_field',
  missing_field: 'invalid_key_field',
  invalid_value: 'invalid_key_field',
} as const satisfies Record<string, GatewayErrorCode>;

function keyNotFound(id: string): AdminFailure {
  return new AdminFailure('key_not_found', `No key with id "${id.slice(0, 100)}".`);
}

function readOnly(id: string): AdminFailure {
  return new AdminFailure('key_read_only', `${id} is a MANA_LLM_API_KEYS key: it is read-only here (change the environment variable and restart instead).`, {
    heldBy: ['MANA_LLM_API_KEYS'],
  });
}

/** The static key a path names (`env-<n>` within the count), if any. */
function staticIndex(ctx: KeyContext, id: string): number | undefined {
  const match = STATIC_KEY_ID.exec(id);
  if (match === null) return undefined;
  const n = Number(match[1]);
  return n <= ctx.keys.staticKeyCount ? n : undefined;
}

/** A static key as listings show it: read-only, no settings of its own. */
function staticKeyJson(n: number): Record<string, unknown> {
  const id = staticKeyId(n);
  return {
    object: 'service_key',
    id,
    name: id,
    kind: 'static',
    read_only: true,
    description: `Key ${n} of MANA_LLM_API_KEYS.`,
    created_at: null,
    last_used_at: null,
    expires_at: null,
    disabled: false,
    aliases: null,
    priority: null,
    max_concurrency: null,
    previous_secret_valid_until: null,
  };
}

function storedKeyJson(key: StoredServiceKey): Record<string, unknown> {
  const { id, name, ...rest } = serviceKeyJson(key);
  return { object: 'service_key', id, name, kind: 'service', read_only: false, ...rest };
}

/** Runs a store call, answering its failure with 503 (the body and the log carry no secret: none reaches the store). */
async function stored<T>(ctx: KeyContext, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isAdminFailure(error)) throw error;
    if (isKeyFieldError(error)) throw new AdminFailure(FIELD_CODES[error.reason], error.message, { param: error.param });
    throw new AdminFailure(
      ctx.shared ? 'shared_state_unavailable' : 'usage_store_unavailable',
      `The ${ctx.shared ? 'PostgreSQL database' : 'usage store'} holding the keys cannot be written right now; nothing was changed. Keys known before keep working.`,
    );
  }
}

function settings<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (isKeyFieldError(error)) throw new AdminFailure(FIELD_CODES[error.reason], error.message, { param: error.param });
    throw error;
  }
}

/** 400 unknown_alias for an allow-list entry the config does not serve. */
function checkAliasesExist(ctx: KeyContext, aliases: readonly string[] | null): void {
  if (aliases === null) return;
  const config = ctx.config();
  for (const entry of aliases) {
    if (config.aliases.has(entry)) continue;
    const split = splitTarget(entry);
    if (split !== undefined && split.provider !== ALIAS_NAMESPACE && config.providers.has(split.provider)) continue;
    throw new AdminFailure(
      'unknown_alias',
      `aliases: "${entry.slice(0, 200)}" is neither a configured alias nor a provider/model target of a configured provider.`,
      { param: 'aliases' },
    );
  }
}

function outcomeOf(id: string, outcome: ServiceKeyWrite): StoredServiceKey {
  if (outcome.kind === 'not_found') throw keyNotFound(id);
  if (outcome.kind === 'name_taken') {
    throw new AdminFailure('key_name_taken', `Another key (${outcome.heldBy}) is already named so; a name says which service holds the key.`, {
      param: 'name',
      heldBy: [outcome.heldBy],
    });
  }
  return outcome.key;
}

/** Refuses a write to a static key or an id no key can have; returns the id to write. */
function writableId(ctx: KeyContext, id: string): string {
  if (staticIndex(ctx, id) !== undefined) throw readOnly(id);
  if (!isKeyId(id)) throw keyNotFound(id);
  return id;
}

export function listKeys(ctx: KeyContext): KeyAnswer {
  const statics = Array.from({ length: ctx.keys.staticKeyCount }, (_, i) => staticKeyJson(i + 1));
  return { status: 200, body: { object: 'list', data: [...statics, ...ctx.keys.all().map(storedKeyJson)] } };
}

export function getKey(ctx: KeyContext, id: string): KeyAnswer {
  const n = staticIndex(ctx, id);
  if (n !== undefined) return { status: 200, body: staticKeyJson(n) };
  const key = isKeyId(id) ? ctx.keys.get(id) : undefined;
  if (key === undefined) throw keyNotFound(id);
  return { status: 200, body: storedKeyJson(key) };
}

export async function createKey(ctx: KeyContext, body: unknown): Promise<KeyAnswer> {
  const wanted: KeySettings = settings(() => settingsFromCreate(body));
  checkAliasesExist(ctx, wanted.aliases);
  if (ctx.keys.count >= MAX_SERVICE_KEYS) {
    throw new AdminFailure('key_limit_reached', `This gateway holds ${MAX_SERVICE_KEYS} service keys, its most; delete unused ones first.`);
  }
  const issued = issueKey(wanted, Date.now());
  const key = outcomeOf(issued.record.id, await stored(ctx, () => ctx.keys.write((store) => store.createServiceKey(issued.record))));
  return { status: 201, body: { ...storedKeyJson(key), key: issued.key } };
}

export async function patchKey(ctx: KeyContext, id: string, body: unknown): Promise<KeyAnswer> {
  writableId(ctx, id);
  if (!isPlainObject(body)) throw new AdminFailure('invalid_request', 'The body must be a JSON object of the fields to change (a merge patch).');
  const key = outcomeOf(
    id,
    await stored(ctx, () =>
      ctx.keys.write((store) =>
        store.updateServiceKey(id, (current) => {
          const next = settings(() => settingsFromPatch(current, body));
          if (Object.hasOwn(body, 'aliases')) checkAliasesExist(ctx, next.aliases);
          return { ...current, ...next };
        }),
      ),
    ),
  );
  return { status: 200, body: storedKeyJson(key) };
}

export async function deleteKey(ctx: KeyContext, id: string): Promise<KeyAnswer> {
  writableId(ctx, id);
  if (!(await stored(ctx, () => ctx.keys.delete(id)))) throw keyNotFound(id);
  return { status: 200, body: { object: 'service_key.deleted', id, deleted: true } };
}

/**
 * The grace of a rotation: a number of seconds, or a duration string
 * ("24h", "90m", "0"; plain digits are seconds too). Default 24 h.
 */
export function graceOf(body: unknown): number {
  if (body === undefined) return DEFAULT_ROTATION_GRACE_MS;
  if (!isPlainObject(body)) throw new AdminFailure('invalid_request', 'The body must be a JSON object: {"grace": "24h"} (or empty for the default).');
  for (const field of Object.keys(body)) {
    if (field !== 'grace') throw new AdminFailure('unknown_field', `Unknown field "${field.slice(0, 100)}"; a rotation takes only grace.`, { param: field.slice(0, 100) });
  }
  const grace = body.grace;
  if (grace === undefined) return DEFAULT_ROTATION_GRACE_MS;
  const ms =
    typeof grace === 'number' && Number.isFinite(grace) && grace >= 0
      ? Math.round(grace * 1_000)
      : typeof grace === 'string' && /^\s*\d{1,10}\s*$/.test(grace)
        ? Number(grace) * 1_000
        : parseDuration(grace);
  if (ms === undefined || !(ms >= 0 && ms <= MAX_ROTATION_GRACE_MS)) {
    throw new AdminFailure('invalid_request', 'grace must be seconds (a number) or a duration such as "24h", "90m" or "0", at most 30 days.', { param: 'grace' });
  }
  return ms;
}

export async function rotateServiceKey(ctx: KeyContext, id: string, body: unknown): Promise<KeyAnswer> {
  writableId(ctx, id);
  const graceMs = graceOf(body);
  let shown = '';
  const now = Date.now();
  const key = outcomeOf(
    id,
    await stored(ctx, () =>
      ctx.keys.write((store) =>
        store.updateServiceKey(
          id,
          (current) => {
            const rotated = rotateKey(current, graceMs, now);
            shown = rotated.key;
            return rotated.record;
          },
          now,
        ),
      ),
    ),
  );
  return { status: 200, body: { ...storedKeyJson(key), key: shown } };
}
