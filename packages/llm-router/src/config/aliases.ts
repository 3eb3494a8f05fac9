import { ALIAS_NAMESPACE, MANA_LLM_ALIASES } from '@mana/llm-aliases';
import type { AliasConfig, AnswerCheck, ProviderConfig, Settings, Strategy, TargetConfig } from '../types.js';
import type { ConfigPath } from './config-source.js';
import { readPrice } from './price.js';
import { readConcurrency } from './concurrency.js';
import { readRateLimits } from './rate-limits.js';
import type { ConfigReader, RawMap } from './reader.js';
import { contextWindowOf } from './context-window.js';
import { readEmbeddingKeys, settleEmbeddingSpace, type TargetEmbedding } from './embedding-space.js';
import { ALIAS_KEYS, ALIAS_KINDS, ALIAS_NAME, ANSWER_CHECKS, FOREIGN_ALIAS_NAME, ON_ALL_UNHEALTHY, STRATEGIES, TARGET_KEYS } from './schema.js';
import { modelIdProblem, splitTarget } from './targets.js';

/**
 * Builds the `aliases:` section. An alias is either a map (strategy, chain, …)
 * or, in the plan's original format, just its chain as a list of strings.
 */
export function buildAliases(
  reader: ConfigReader,
  section: unknown,
  providers: ReadonlyMap<string, ProviderConfig>,
): Map<string, AliasConfig> {
  if (section === undefined || section === null) {
    reader.fail(['aliases'], `an "aliases:" section is required (${requiredAliases()})`, undefined, true);
  }
  const declared = reader.map(section, ['aliases'], 'aliases');
  const aliases = new Map<string, AliasConfig>();
  for (const [name, raw] of Object.entries(declared)) {
    aliases.set(name, buildAlias(reader, name, raw, providers));
  }
  const missing = MANA_LLM_ALIASES.filter((info) => !aliases.has(info.alias));
  if (missing.length > 0) {
    const list = missing.map((info) => `${info.alias} (MANA_LLM.${info.key})`).join(', ');
    reader.fail(['aliases'], `missing alias ${list}: every @mana/llm-aliases alias must be defined`, undefined, true);
  }
  // Product code sends MANA_LLM.EMBED to /v1/embeddings: the config must serve it there.
  for (const info of MANA_LLM_ALIASES) {
    const kind = aliases.get(info.alias)?.kind;
    if (kind !== info.kind) {
      reader.fail(['aliases', info.alias], `${info.alias} (MANA_LLM.${info.key}) must be kind: ${info.kind}, not ${kind ?? 'chat'}`, info.alias, true);
    }
  }
  return aliases;
}

function requiredAliases(): string {
  return `every @mana/llm-aliases alias must be defined: ${MANA_LLM_ALIASES.map((info) => info.alias).join(', ')}`;
}

function buildAlias(
  reader: ConfigReader,
  name: string,
  raw: unknown,
  providers: ReadonlyMap<string, ProviderConfig>,
): AliasConfig {
  const path = ['aliases', name];
  checkAliasName(reader, name, path, providers);
  // `mana/x: [a/b, c/d]` is the original strings-only format: the list is the chain.
  if (typeof raw !== 'object' && raw !== undefined) {
    reader.fail(path, `alias ${name} must be a list of provider/model targets or a map with a chain`, name);
  }
  const map: RawMap = Array.isArray(raw) ? { chain: raw } : raw === null ? {} : reader.map(raw, path, `alias ${name}`, name);
  if (!Array.isArray(raw)) reader.keys(map, ALIAS_KEYS, path, `alias ${name}`, name);
  const chainPath = Array.isArray(raw) ? path : [...path, 'chain'];

  const kind = readChoice(reader, map.kind, [...path, 'kind'], 'kind', ALIAS_KINDS, 'chat', name);
  const strategy = readChoice(reader, map.strategy, [...path, 'strategy'], 'strategy', STRATEGIES, 'failover', name);
  const onAllUnhealthy = readChoice(reader, map.on_all_unhealthy, [...path, 'on_all_unhealthy'], 'on_all_unhealthy', ON_ALL_UNHEALTHY, 'fail', name);
  const failOverOn = readAnswerChecks(reader, map, path, name);
  const failOverOnEmpty = failOverOn.has('empty');
  const failOverOnContextLength =
    map.fail_over_on_context_length === undefined
      ? true
      : reader.boolean(map.fail_over_on_context_length, [...path, 'fail_over_on_context_length'], 'fail_over_on_context_length', name);
  const hedgeBackground =
    map.hedge_background === undefined ? false : reader.boolean(map.hedge_background, [...path, 'hedge_background'], 'hedge_background', name);
  // Shown in /v1/models and /v1/aliases: taken as written, never expanded.
  const description = map.description === undefined || map.description === null ? '' : reader.text(map.description, [...path, 'description'], 'description', name);
  const aliasSettings = reader.settings(map.settings, [...path, 'settings'], name);

  const rawChain = map.chain;
  if (rawChain === undefined || rawChain === null || (Array.isArray(rawChain) && rawChain.length === 0)) {
    reader.fail(chainPath, 'chain must list at least one provider/model target', name, true);
  }
  if (!Array.isArray(rawChain)) reader.fail(chainPath, 'chain must be a list of provider/model targets', name);

  const chain: TargetConfig[] = [];
  const embeddings: TargetEmbedding[] = [];
  rawChain.forEach((entry, index) => {
    const { target, shown, embedding } = buildTarget(reader, name, strategy, entry, [...chainPath, index], providers, aliasSettings);
    if (chain.some((existing) => existing.id === target.id)) {
      reader.fail([...chainPath, index], `target ${shown} is listed twice in the chain`, name);
    }
    chain.push(target);
    embeddings.push(embedding);
  });
  const aliasEmbedding = Array.isArray(raw) ? { space: undefined, maxBatch: undefined } : readEmbeddingKeys(reader, map, path, name);
  const { embeddingSpace, maxBatch } = settleEmbeddingSpace(reader, name, kind, path, aliasEmbedding, embeddings);

  return Object.freeze({
    name,
    description,
    kind,
    embeddingSpace,
    maxBatch,
    strategy,
    onAllUnhealthy,
    failOverOnEmpty,
    failOverOn,
    failOverOnContextLength,
    hedgeBackground,
    chain: Object.freeze(chain),
  });
}
/**
 * `fail_over_on: [empty, refusal, …]` (the whole list), or the older
 * `fail_over_on_empty: true|false`; both at once would contradict each other.
 */
function readAnswerChecks(reader: ConfigReader, map: RawMap, path: ConfigPath, alias: string): ReadonlySet<AnswerCheck> {
  if (map.fail_over_on === undefined) {
    const empty =
      map.fail_over_on_empty === undefined ? true : reader.boolean(map.fail_over_on_empty, [...path, 'fail_over_on_empty'], 'fail_over_on_empty', alias);
    return new Set<AnswerCheck>(empty ? ['empty'] : []);
  }
  const at = [...path, 'fail_over_on'];
  if (map.fail_over_on_empty !== undefined) {
    reader.fail(at, 'use either fail_over_on or fail_over_on_empty, not both (list empty in fail_over_on instead)', alias, true);
  }
  if (!Array.isArray(map.fail_over_on)) {
    reader.fail(at, `fail_over_on must be a list of ${ANSWER_CHECKS.join(', ')}`, alias);
  }
  const checks = new Set<AnswerCheck>();
  map.fail_over_on.forEach((entry, index) => {
    const value = reader.string(entry, [...at, index], 'fail_over_on entry', alias).value as AnswerCheck;
    if (!ANSWER_CHECKS.includes(value)) {
      reader.fail([...at, index], `unknown fail_over_on entry "${value}" (known: ${ANSWER_CHECKS.join(', ')})`, alias);
    }
    checks.add(value);
  });
  return checks;
}

/**
 * `mana/` names are lowercase slugs. Other names (LiteLLM-style `gpt-4o`) are
 * allowed, but not one that reads as a configured provider's direct target
 * (`groq/x`): the alias would silently shadow it.
 */
function checkAliasName(reader: ConfigReader, name: string, path: ConfigPath, providers: ReadonlyMap<string, ProviderConfig>): void {
  if (name.startsWith(`${ALIAS_NAMESPACE}/`)) {
    if (!ALIAS_NAME.test(name)) {
      reader.fail(path, `alias name "${name}" must be ${ALIAS_NAMESPACE}/ followed by lowercase letters, digits, ., _ or - (e.g. ${ALIAS_NAMESPACE}/long-form)`, name, true);
    }
    return;
  }
  if (!FOREIGN_ALIAS_NAME.test(name)) {
    reader.fail(path, `alias name "${name.slice(0, 200)}" must be at most 200 letters, digits or . _ : @ + / - (starting with a letter or digit)`, name.slice(0, 200), true);
  }
  const prefix = splitTarget(name)?.provider;
  if (prefix !== undefined && providers.has(prefix)) {
    reader.fail(path, `alias name "${name}" clashes with provider ${prefix}'s direct targets (${prefix}/<model>)`, name, true);
  }
}

function buildTarget(
  reader: ConfigReader,
  alias: string,
  strategy: Strategy,
  entry: unknown,
  path: ConfigPath,
  providers: ReadonlyMap<string, ProviderConfig>,
  aliasSettings: Partial<Settings>,
): { target: TargetConfig; shown: string; embedding: TargetEmbedding } {
  const map: RawMap = typeof entry === 'string' ? { target: entry } : reader.map(entry, path, 'a chain entry (a "provider/model" string or { target, weight, settings, price, embedding_space, max_batch })', alias);
  if (typeof entry !== 'string') reader.keys(map, TARGET_KEYS, path, 'chain entry', alias);
  if (map.target === undefined) reader.fail(path, 'chain entry needs a target: provider/model', alias);
  const targetPath = typeof entry === 'string' ? path : [...path, 'target'];
  // Sent in X-Mana-LLM-Resolved and metric labels: taken as written, never expanded.
  const id = reader.identifier(map.target, targetPath, 'target', alias).trim();

  const problem = modelIdProblem(id);
  if (problem !== undefined) reader.fail(targetPath, `target ${JSON.stringify(id.slice(0, 80))} ${problem}: it is sent in the X-Mana-LLM-Resolved header`, alias);
  const split = splitTarget(id);
  if (split === undefined) reader.fail(targetPath, `target "${id}" must be provider/model (e.g. groq/llama-3.3-70b-versatile)`, alias);
  if (split.provider === ALIAS_NAMESPACE) {
    reader.fail(targetPath, `target ${id} is an alias: a chain lists provider models, not other aliases`, alias);
  }
  const provider = providers.get(split.provider);
  if (provider === undefined) {
    reader.fail(targetPath, `unknown provider "${split.provider}" in target ${id} (known: ${[...providers.keys()].join(', ')})`, alias);
  }

  let weight = 1;
  if (map.weight !== undefined) {
    if (strategy !== 'weighted') {
      reader.fail([...path, 'weight'], `weight on target ${id} needs strategy: weighted (this alias uses ${strategy})`, alias, true);
    }
    weight = typeof map.weight === 'number' ? map.weight : Number.NaN;
    if (!Number.isFinite(weight) || weight <= 0) reader.fail([...path, 'weight'], `weight of ${id} must be a positive number`, alias);
  }

  // Cascade: defaults ← global ← provider (already in provider.settings) ← alias ← target.
  const settings: Settings = Object.freeze({
    ...provider.settings,
    ...aliasSettings,
    ...reader.settings(map.settings, [...path, 'settings'], alias),
  });
  const price = readPrice(reader, map.price, [...path, 'price'], `target ${id}`, alias) ?? provider.price;
  const concurrency = readConcurrency(reader, map.max_concurrency, [...path, 'max_concurrency'], 'target', id, alias) ?? provider.concurrency;
  const rates = readRateLimits(reader, map, path, 'target', id, alias, provider.rates);
  const target: TargetConfig = Object.freeze({
    id,
    provider: split.provider,
    model: split.model,
    weight,
    settings,
    price,
    contextWindow: contextWindowOf(provider, settings),
    concurrency,
    rates,
  });
  const declared = typeof entry === 'string' ? { space: undefined, maxBatch: undefined } : readEmbeddingKeys(reader, map, path, alias);
  return { target, shown: id, embedding: { ...declared, path, id } };
}

function readChoice<T extends string>(
  reader: ConfigReader,
  value: unknown,
  path: ConfigPath,
  what: string,
  choices: readonly T[],
  fallback: T,
  alias: string,
): T {
  if (value === undefined || value === null) return fallback;
  const read = reader.string(value, path, what, alias);
  const text = read.value as T;
  if (!choices.includes(text)) reader.fail(path, `unknown ${what} "${reader.shown(value, read)}" (known: ${choices.join(', ')})`, alias);
  return text;
}
