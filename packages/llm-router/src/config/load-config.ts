import { RouterError } from '../errors.js';
import type { ConfigSnapshot, Settings } from '../types.js';
import { buildAliases } from './aliases.js';
import { ConfigSource } from './config-source.js';
import { DEFAULT_BACKGROUND_CONCURRENCY, DEFAULT_SETTINGS } from './defaults.js';
import { FrozenMap } from './frozen-map.js';
import type { Env } from './interpolate.js';
import { buildProviders } from './providers.js';
import { ConfigFileError, readConfigFile } from './read-config-file.js';
import { ConfigReader } from './reader.js';
import { readSecretsFile, withSecrets } from './secrets-file.js';
import { TOP_LEVEL_KEYS } from './schema.js';

export { DEFAULT_SETTINGS } from './defaults.js';

export interface ParseConfigOptions {
  /** Names the config in error messages and `snapshot.source` (default `config`). */
  readonly source?: string;
  /** Variables for `${VAR}` interpolation (default `process.env`). */
  readonly env?: Env;
  /** Clock for `snapshot.loadedAt` (default `Date.now`). */
  readonly now?: () => number;
}

/**
 * YAML text → a validated, immutable snapshot. Throws one
 * RouterError('invalid_config') naming the file, line and alias of the first
 * problem; nothing is partially applied.
 */
export function parseConfig(text: string, options: ParseConfigOptions = {}): ConfigSnapshot {
  const name = options.source ?? 'config';
  const source = ConfigSource.parse(text, name);
  const reader = new ConfigReader(source, options.env ?? process.env);
  const root = source.data === null || source.data === undefined ? {} : reader.map(source.data, [], 'the config');
  reader.keys(root, TOP_LEVEL_KEYS, [], 'the top level');

  const globalSettings = reader.settings(root.settings, ['settings']);
  const backgroundConcurrency =
    root.background_concurrency === undefined
      ? DEFAULT_BACKGROUND_CONCURRENCY
      : reader.count(root.background_concurrency, ['background_concurrency'], 'background_concurrency', 1);
  const usageRetentionMs = root.usage_retention === undefined ? undefined : retention(reader, root.usage_retention);
  const providers = buildProviders(reader, root.providers, globalSettings);
  const aliases = buildAliases(reader, root.aliases, providers);
  const settings: Settings = Object.freeze({ ...DEFAULT_SETTINGS, ...globalSettings });

  return Object.freeze({
    source: name,
    loadedAt: (options.now ?? Date.now)(),
    settings,
    providers: new FrozenMap(providers),
    aliases: new FrozenMap(aliases),
    backgroundConcurrency,
    usageRetentionMs,
  });
}

/** The gateway keeps usage records this long; under a minute would delete what was just written. */
const MIN_USAGE_RETENTION_MS = 60_000; // 1 min

function retention(reader: ConfigReader, value: unknown): number {
  const ms = reader.duration(value, ['usage_retention'], 'usage_retention', true);
  if (ms < MIN_USAGE_RETENTION_MS) reader.fail(['usage_retention'], `usage_retention must be at least 1m, got ${JSON.stringify(value)}`);
  return ms;
}

/**
 * Reads and parses a config file, with the secrets file beside it (see
 * secrets-file.ts); unreadable files fail as invalid_config too, and so does
 * anything but a regular file of at most 1 MB (read-config-file.ts).
 */
export async function loadConfigFile(path: string, options: Omit<ParseConfigOptions, 'source'> = {}): Promise<ConfigSnapshot> {
  let text: string;
  try {
    text = await readConfigFile(path);
  } catch (error) {
    const reason = error instanceof ConfigFileError ? error.message : ((error as NodeJS.ErrnoException).code ?? 'unreadable');
    throw new RouterError('invalid_config', `invalid config at ${path}: cannot read the file (${reason})`, { cause: error });
  }
  const secrets = await readSecretsFile(path);
  return parseConfig(text, { ...options, source: path, env: withSecrets(options.env ?? process.env, secrets) });
}
