import { ALIAS_NAMESPACE, DEFAULT_ALIAS, MANA_LLM } from '@mana/llm-aliases';
import { RouterError } from '../errors.js';
import type { AliasConfig, AnswerCheck, ConfigSnapshot, Operation } from '../types.js';
import { contextWindowOf } from './context-window.js';
import { splitTarget } from './targets.js';

const EMPTY_ONLY: ReadonlySet<AnswerCheck> = new Set<AnswerCheck>(['empty']);

/** What a request's `model` resolved to. */
export interface Resolution {
  /** The alias used, or undefined for a direct `provider/model` target. */
  readonly alias: string | undefined;
  readonly config: AliasConfig;
}

/**
 * `model` → the chain to try:
 * - an alias → its configured chain;
 * - a direct `provider/model` of a known provider → a one-target chain;
 * - undefined → DEFAULT_ALIAS (MANA_LLM.EMBED for embeddings);
 * - anything else → RouterError('unknown_model') listing the aliases.
 */
export function resolveModel(snapshot: ConfigSnapshot, model: string | undefined, operation: Operation = 'chat'): Resolution {
  const name = model ?? (operation === 'embedding' ? MANA_LLM.EMBED : DEFAULT_ALIAS);
  const alias = snapshot.aliases.get(name);
  if (alias !== undefined) return { alias: name, config: alias };

  const split = splitTarget(name);
  const provider = split === undefined || split.provider === ALIAS_NAMESPACE ? undefined : snapshot.providers.get(split.provider);
  if (split !== undefined && provider !== undefined) {
    // Built per request and not cached: `model` is caller input, and a cache
    // keyed by it would grow without bound.
    const target = Object.freeze({
      id: name,
      provider: split.provider,
      model: split.model,
      weight: 1,
      settings: provider.settings,
      price: provider.price,
      contextWindow: contextWindowOf(provider, provider.settings),
      concurrency: provider.concurrency,
      rates: provider.rates,
    });
    const config: AliasConfig = Object.freeze({
      name,
      description: '',
      // A direct target serves whatever the caller asks of it; it declares no vector space.
      kind: operation,
      embeddingSpace: undefined,
      maxBatch: undefined,
      strategy: 'failover',
      onAllUnhealthy: 'fail',
      failOverOnEmpty: true,
      failOverOn: EMPTY_ONLY,
      // One target and nothing behind it: the upstream's own context-length 400 is the answer to relay.
      failOverOnContextLength: false,
      hedgeBackground: false,
      chain: Object.freeze([target]),
    });
    return { alias: undefined, config };
  }

  const knownAliases = [...snapshot.aliases.keys()];
  const shown = name.length > 200 ? `${name.slice(0, 200)}…` : name;
  throw new RouterError(
    'unknown_model',
    `unknown model "${shown}": use one of the aliases ${knownAliases.join(', ')} ` +
      `(or a provider/model target of: ${[...snapshot.providers.keys()].join(', ')})`,
    { knownAliases },
  );
}

/** Every model a client may name: the aliases, then the direct targets in their chains (each once). */
export function listModels(snapshot: ConfigSnapshot): string[] {
  const models = new Set<string>(snapshot.aliases.keys());
  for (const alias of snapshot.aliases.values()) {
    for (const target of alias.chain) models.add(target.id);
  }
  return [...models];
}
