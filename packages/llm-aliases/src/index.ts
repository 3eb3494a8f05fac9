/**
 * @mana/llm-aliases — the single source of truth for semantic LLM aliases.
 *
 * Product code names an alias (`MANA_LLM.LONG_FORM`), never a concrete provider
 * model. The gateway resolves the alias to a chain of provider models. The lint
 * gate (ESLint rule + validation script) imports the provider prefixes and the
 * raw-model pattern from here so there is exactly one definition of both.
 *
 * Zero runtime dependencies on purpose: every app and tool may import this.
 */

/** The semantic aliases product code may send as `model`. */
export const MANA_LLM = {
  /** Short answers, classification, routing decisions: lowest latency wins. */
  FAST_TEXT: 'mana/fast-text',
  /** Long prose: articles, summaries, emails; quality over latency. */
  LONG_FORM: 'mana/long-form',
  /** JSON output that must parse: extraction, forms, structured results. */
  STRUCTURED: 'mana/structured',
  /** Agent missions and tool calls: multi-step reasoning. */
  REASONING: 'mana/reasoning',
  /** Image + text input: screenshots, photos, documents. */
  VISION: 'mana/vision',
  /**
   * Text embeddings for search, RAG and deduplication (`POST /v1/embeddings`).
   * Every target of this alias serves the same vector space, so vectors stay
   * comparable whichever target answered.
   */
  EMBED: 'mana/embed',
} as const;

/** The key of an alias constant, e.g. `'LONG_FORM'`. */
export type ManaLlmAliasKey = keyof typeof MANA_LLM;

/** The union of alias values, e.g. `'mana/long-form'`. */
export type ManaLlmAlias = (typeof MANA_LLM)[ManaLlmAliasKey];

/** The namespace every alias lives in; anything else with a `/` is a direct target. */
export const ALIAS_NAMESPACE = 'mana' as const;

/** The alias used when a request names no model. */
export const DEFAULT_ALIAS: ManaLlmAlias = MANA_LLM.FAST_TEXT;

/**
 * What an alias serves: `chat` on `/v1/chat/completions`, `embedding` on
 * `/v1/embeddings`. The gateway refuses an alias on the other route.
 */
export type ManaLlmAliasKind = 'chat' | 'embedding';

export interface ManaLlmAliasInfo {
  /** The constant's key, e.g. `'LONG_FORM'`. */
  readonly key: ManaLlmAliasKey;
  /** The alias string, e.g. `'mana/long-form'`. */
  readonly alias: ManaLlmAlias;
  /** What the alias is for, in one line. */
  readonly description: string;
  /** Which route serves it; the gateway config must declare the same `kind`. */
  readonly kind: ManaLlmAliasKind;
}

/** Every alias with what it is for, in declaration order. */
export const MANA_LLM_ALIASES: readonly ManaLlmAliasInfo[] = Object.freeze([
  { key: 'FAST_TEXT', alias: MANA_LLM.FAST_TEXT, description: 'Short answers and classification', kind: 'chat' },
  { key: 'LONG_FORM', alias: MANA_LLM.LONG_FORM, description: 'Long prose', kind: 'chat' },
  { key: 'STRUCTURED', alias: MANA_LLM.STRUCTURED, description: 'JSON output', kind: 'chat' },
  { key: 'REASONING', alias: MANA_LLM.REASONING, description: 'Agent missions and tool calls', kind: 'chat' },
  { key: 'VISION', alias: MANA_LLM.VISION, description: 'Image + text', kind: 'chat' },
  { key: 'EMBED', alias: MANA_LLM.EMBED, description: 'Text embeddings (one vector space)', kind: 'embedding' },
] as const);

const ALIAS_VALUES: ReadonlySet<string> = new Set(Object.values(MANA_LLM));

/** True when `value` is one of the `MANA_LLM` aliases. */
export function isManaAlias(value: unknown): value is ManaLlmAlias {
  return typeof value === 'string' && ALIAS_VALUES.has(value);
}

/** The `MANA_LLM` key for an alias string, e.g. `'mana/long-form'` → `'LONG_FORM'`. */
export function aliasKeyOf(alias: string): ManaLlmAliasKey | undefined {
  return MANA_LLM_ALIASES.find((info) => info.alias === alias)?.key;
}

/** Providers whose `provider/model` ids must never appear in product code. */
export const PROVIDER_PREFIXES = ['ollama', 'groq', 'openrouter', 'together', 'google', 'anthropic'] as const;

export type ProviderPrefix = (typeof PROVIDER_PREFIXES)[number];

/**
 * The characters a model id may contain after `provider/`: letters, digits and
 * `. _ : - / @ +` (e.g. `gemma3:12b`, `anthropic/claude-3.5-haiku`, `llama-3.3-70b`).
 * No spaces, so prose such as `"ollama/ is down"` or a sentence is not a model id.
 */
const MODEL_ID_BODY = '[A-Za-z0-9][A-Za-z0-9._:@+/-]*';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Builds the one pattern that recognises a raw provider model string: the whole
 * string is `<prefix>/<model id>`. Extra prefixes (an operator's own providers)
 * extend the built-in list.
 */
export function rawModelPattern(extraPrefixes: readonly string[] = []): RegExp {
  const prefixes = [...PROVIDER_PREFIXES, ...extraPrefixes].map(escapeRegExp).join('|');
  return new RegExp(`^(?<provider>${prefixes})/(?<model>${MODEL_ID_BODY})$`);
}

/**
 * Builds the pattern for the start of a template literal with interpolation:
 * `` `ollama/${name}` `` has the head `ollama/`, which already names a provider.
 */
export function rawModelPrefixPattern(extraPrefixes: readonly string[] = []): RegExp {
  const prefixes = [...PROVIDER_PREFIXES, ...extraPrefixes].map(escapeRegExp).join('|');
  return new RegExp(`^(?<provider>${prefixes})/(?:${MODEL_ID_BODY})?$`);
}

/** The built-in raw provider model pattern (see {@link rawModelPattern}). */
export const RAW_MODEL_PATTERN: RegExp = rawModelPattern();

/** True when the whole of `value` is a raw provider model id such as `groq/llama-3.1-8b-instant`. */
export function isRawProviderModel(value: string, extraPrefixes: readonly string[] = []): boolean {
  const pattern = extraPrefixes.length === 0 ? RAW_MODEL_PATTERN : rawModelPattern(extraPrefixes);
  return pattern.test(value);
}

/** What to use instead of a raw provider model, read from the gateway's alias config. */
export interface AliasSuggestion {
  /** The alias whose chain lists the model, e.g. `'mana/long-form'`. */
  readonly alias: ManaLlmAlias;
  /** Its `MANA_LLM` key, e.g. `'LONG_FORM'`. */
  readonly key: ManaLlmAliasKey;
}

function chainTarget(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry;
  if (entry !== null && typeof entry === 'object' && 'target' in entry) {
    const target = (entry as { target: unknown }).target;
    return typeof target === 'string' ? target : undefined;
  }
  return undefined;
}

/**
 * Reads the `aliases:` map of a parsed gateway alias config
 * (`aliases: { mana/long-form: { chain: ['ollama/gemma3:12b', { target: … }] } }`)
 * into "provider model → the `MANA_LLM` alias to name instead". When a model sits
 * in several chains, the alias where it comes earliest wins (ties: the first alias
 * in the file), so `groq/llama-3.1-8b-instant` suggests the alias it leads.
 * Aliases outside `MANA_LLM` are skipped: there is no constant to suggest.
 *
 * Takes the already parsed document so this package stays free of a YAML parser;
 * the ESLint rule and the validation script both call it. Throws a `TypeError`
 * when the document has no `aliases` map.
 */
export function aliasSuggestionIndex(config: unknown): ReadonlyMap<string, AliasSuggestion> {
  const aliases =
    config !== null && typeof config === 'object' ? (config as { aliases?: unknown }).aliases : undefined;
  if (aliases === null || typeof aliases !== 'object' || Array.isArray(aliases)) {
    throw new TypeError('the alias config has no "aliases" map');
  }
  const best = new Map<string, AliasSuggestion & { position: number }>();
  for (const [alias, definition] of Object.entries(aliases as Record<string, unknown>)) {
    const key = aliasKeyOf(alias);
    if (key === undefined || definition === null || typeof definition !== 'object') continue;
    const chain = (definition as { chain?: unknown }).chain;
    if (!Array.isArray(chain)) continue;
    chain.forEach((entry, position) => {
      const target = chainTarget(entry);
      if (target === undefined) return;
      const current = best.get(target);
      if (current === undefined || position < current.position) {
        best.set(target, { alias: MANA_LLM[key], key, position });
      }
    });
  }
  return new Map([...best].map(([model, { alias, key }]) => [model, { alias, key }]));
}
