/**
 * Finds and reads the gateway's alias config (`apps/llm-gateway/aliases.yaml`) to
 * learn which alias's chain lists a provider model, so a finding can say
 * "use MANA_LLM.LONG_FORM". The chain logic itself lives in `@mana/llm-aliases`
 * (`aliasSuggestionIndex`); this file only locates, parses and caches.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { aliasSuggestionIndex, type AliasSuggestion } from '@mana/llm-aliases';
import { parse } from 'yaml';

/** Where the gateway keeps its alias config, relative to the repository root. */
export const DEFAULT_ALIAS_CONFIG = path.join('apps', 'llm-gateway', 'aliases.yaml');

export type AliasIndex = ReadonlyMap<string, AliasSuggestion>;

/** The config exists but cannot be read or does not describe aliases. */
export class AliasConfigError extends Error {
  override readonly name = 'AliasConfigError';
  constructor(
    readonly file: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${file}: ${message}`, options);
  }
}

/**
 * Walks up from `startDir` and returns the first `<dir>/apps/llm-gateway/aliases.yaml`
 * that exists, or `undefined`. Not cached: a file created while an editor's ESLint
 * server runs is picked up on the next lint.
 */
export function findAliasConfig(startDir: string): string | undefined {
  let dir = path.resolve(startDir);
  for (;;) {
    const candidate = path.join(dir, DEFAULT_ALIAS_CONFIG);
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** Parses alias config text; throws `AliasConfigError` naming the file. */
export function parseAliasConfig(text: string, file: string): AliasIndex {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw new AliasConfigError(file, `not valid YAML (${(error as Error).message.split('\n')[0]})`, { cause: error });
  }
  try {
    return aliasSuggestionIndex(document);
  } catch (error) {
    throw new AliasConfigError(file, (error as Error).message, { cause: error });
  }
}

const cache = new Map<string, { stamp: string; index: AliasIndex }>();

/**
 * Reads and indexes an alias config, cached per path and modification time so a
 * lint run parses it once and an editor session sees edits.
 * Throws `AliasConfigError` when it cannot be read or parsed.
 */
export function loadAliasConfig(file: string): AliasIndex {
  const absolute = path.resolve(file);
  let stamp: string;
  try {
    const stat = statSync(absolute);
    if (!stat.isFile()) throw new Error('not a regular file');
    stamp = `${stat.mtimeMs}:${stat.size}`;
  } catch (error) {
    throw new AliasConfigError(absolute, `cannot read the alias config (${(error as Error).message})`, { cause: error });
  }
  const cached = cache.get(absolute);
  if (cached?.stamp === stamp) return cached.index;
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (error) {
    throw new AliasConfigError(absolute, `cannot read the alias config (${(error as Error).message})`, { cause: error });
  }
  const index = parseAliasConfig(text, absolute);
  cache.set(absolute, { stamp, index });
  return index;
}
