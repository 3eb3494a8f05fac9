/**
 * Aliases as the admin API reads and writes them. Input is checked for
 * unknown fields (400 naming the field) and size; the values themselves are
 * validated by the router's loader when the edited file is parsed (422).
 *
 * Accepted habits of the multi-target design: `target` (one string) is a
 * one-item chain, `targets` is `chain`. An alias with one target has no
 * strategy and no weights: they are dropped when written.
 */
import { MANA_LLM_ALIASES } from '@mana/llm-aliases';
import { ALIAS_KEYS, TARGET_KEYS } from '@mana/llm-router';
import { AdminFailure } from './admin-failure.js';
import { checkBodyName } from './body-checks.js';
import { targetDigest } from './target-digest.js';
import { isPlainObject } from '../plain-object.js';

/** Most targets one alias may list through the API: 64. */
const MAX_CHAIN_TARGETS = 64;

/** The alias keys of the config (the router's list), other than the chain, in the order they are written. */
const ALIAS_VALUE_KEYS: readonly string[] = ALIAS_KEYS.filter((key) => key !== 'chain');
/** Keys of an alias body; `name` (equal to the path's) is accepted so a GET body can be sent back. */
const ALIAS_FIELDS = ['name', ...ALIAS_KEYS, 'targets', 'target'];
/** A chain entry's keys (the router's list); `id` is read-only. */
const ENTRY_FIELDS = [...TARGET_KEYS, 'id'];
/** Read-only fields a GET returns; ignored when sent back. */
const READ_ONLY_FIELDS = ['id', 'required', 'version'];

export interface ChainEntry {
  readonly target: string;
  readonly weight?: unknown;
  readonly settings?: unknown;
  /** The other chain-entry keys of the config (e.g. `price`). */
  readonly [key: string]: unknown;
}

/** An alias in its written form (the YAML keys), before validation. */
export interface AliasSpec {
  readonly description?: unknown;
  readonly strategy?: unknown;
  readonly on_all_unhealthy?: unknown;
  readonly fail_over_on_empty?: unknown;
  readonly settings?: unknown;
  readonly chain: readonly ChainEntry[];
}

export function isRequiredAlias(name: string): boolean {
  return MANA_LLM_ALIASES.some((info) => info.alias === name);
}


function unknownField(field: string, allowed: readonly string[]): AdminFailure {
  return new AdminFailure('unknown_field', `Unknown field "${field.slice(0, 100)}" (allowed: ${allowed.join(', ')}).`, { param: field.slice(0, 100) });
}

/** A request body → an AliasSpec; throws AdminFailure for unknown fields, a wrong shape or too many targets. */
export function aliasSpecFromBody(body: unknown, name: string): AliasSpec {
  if (!isPlainObject(body)) throw new AdminFailure('invalid_request', 'The body must be a JSON object describing the alias.');
  for (const key of Object.keys(body)) {
    if (!ALIAS_FIELDS.includes(key) && !READ_ONLY_FIELDS.includes(key)) throw unknownField(key, ALIAS_FIELDS);
  }
  checkBodyName(body.name, name);
  const given = ['chain', 'targets', 'target'].filter((key) => body[key] !== undefined);
  if (given.length > 1) throw new AdminFailure('invalid_request', `Send one of chain, targets or target, not ${given.join(' and ')}.`, { param: given[1] });
  const field = given[0] ?? 'chain';
  const rawChain = field === 'target' ? [body.target] : body[field];
  if (!Array.isArray(rawChain) || rawChain.length === 0) {
    throw new AdminFailure('invalid_request', 'An alias needs a non-empty chain (a list of "provider/model" targets).', { param: field });
  }
  if (rawChain.length > MAX_CHAIN_TARGETS) {
    throw new AdminFailure('too_many_targets', `A chain may list at most ${MAX_CHAIN_TARGETS} targets (got ${rawChain.length}).`, { param: field });
  }
  const chain = rawChain.map((entry, index) => chainEntry(entry, `${field}[${index}]`));
  const spec: Record<string, unknown> = {};
  for (const key of ALIAS_VALUE_KEYS) {
    if (body[key] !== undefined && body[key] !== null) spec[key] = body[key];
  }
  return { ...spec, chain } as AliasSpec;
}

function chainEntry(entry: unknown, param: string): ChainEntry {
  if (typeof entry === 'string') return { target: entry };
  if (!isPlainObject(entry)) throw new AdminFailure('invalid_request', `${param} must be "provider/model" or {target, weight, settings}.`, { param });
  for (const key of Object.keys(entry)) if (!ENTRY_FIELDS.includes(key)) throw unknownField(`${param}.${key}`, ENTRY_FIELDS.filter((k) => k !== 'id'));
  if (typeof entry.target !== 'string') throw new AdminFailure('invalid_request', `${param}.target must be a "provider/model" string.`, { param: `${param}.target` });
  const out: Record<string, unknown> = { target: entry.target };
  for (const key of TARGET_KEYS) if (key !== 'target' && entry[key] !== undefined && entry[key] !== null) out[key] = entry[key];
  return out as unknown as ChainEntry;
}

/** The alias as written in the file (a list or a map) → an AliasSpec; undefined if it is neither. */
export function aliasSpecFromYaml(raw: unknown): AliasSpec | undefined {
  const map = Array.isArray(raw) ? { chain: raw } : isPlainObject(raw) ? raw : undefined;
  if (map === undefined || !Array.isArray(map.chain)) return undefined;
  const chain = map.chain.map((entry) => (typeof entry === 'string' ? { target: entry } : isPlainObject(entry) ? ({ ...entry } as unknown as ChainEntry) : { target: String(entry) }));
  const spec: Record<string, unknown> = {};
  for (const key of ALIAS_VALUE_KEYS) if (map[key] !== undefined && map[key] !== null) spec[key] = map[key];
  return { ...spec, chain } as AliasSpec;
}

/**
 * The YAML value to write. One target: no strategy, no weight. A plain chain
 * of strings with no other key keeps the list form when the file used it.
 */
export function aliasYaml(spec: AliasSpec, listForm: boolean): unknown {
  const single = spec.chain.length === 1;
  const chain = spec.chain.map((entry) => {
    const rest: Record<string, unknown> = {};
    for (const key of TARGET_KEYS) {
      if (key === 'target' || entry[key] === undefined || (single && key === 'weight')) continue;
      rest[key] = entry[key];
    }
    return Object.keys(rest).length === 0 ? entry.target : { target: entry.target, ...rest };
  });
  const out: Record<string, unknown> = {};
  for (const key of ALIAS_VALUE_KEYS) {
    const value = (spec as unknown as Record<string, unknown>)[key];
    if (value === undefined || (single && key === 'strategy')) continue;
    out[key] = value;
  }
  out.chain = chain;
  if (listForm && Object.keys(out).length === 1 && chain.every((entry) => typeof entry === 'string')) return chain;
  return out;
}

/** The JSON form of an alias (as a merge patch sees it: no ids, no read-only fields). */
export function aliasPatchBase(spec: AliasSpec): Record<string, unknown> {
  return { ...spec, chain: spec.chain.map((entry) => ({ ...entry })) };
}

/** The strategy an alias runs: none with one target (there is nothing to choose), else the configured one or `failover`. */
export function effectiveStrategy(spec: AliasSpec): unknown {
  return spec.chain.length === 1 ? null : (spec.strategy ?? 'failover');
}

/** What GET returns for an alias: the file's values, each target's stable id, whether the package requires it. */
export function aliasView(name: string, spec: AliasSpec): Record<string, unknown> {
  const { chain, ...rest } = spec;
  return {
    name,
    ...rest,
    description: spec.description ?? '',
    strategy: effectiveStrategy(spec),
    chain: chain.map((entry) => ({ id: targetDigest(name, entry.target), ...entry })),
    required: isRequiredAlias(name),
  };
}

/** The aliases whose chain lists a target of `provider`. */
export function aliasesUsing(aliases: Record<string, unknown>, provider: string): string[] {
  const users: string[] = [];
  for (const [name, raw] of Object.entries(aliases)) {
    const spec = aliasSpecFromYaml(raw);
    if (spec?.chain.some((entry) => typeof entry.target === 'string' && entry.target.startsWith(`${provider}/`))) users.push(name);
  }
  return users;
}
