import { stat } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { RouterError } from '../errors.js';
import type { Env } from './interpolate.js';
import { ConfigFileError, readConfigFile } from './read-config-file.js';

/**
 * API keys sent to the gateway's admin API are never written into the YAML
 * (which is diffed, reviewed and read by the lint rule). They go to a secrets
 * file beside it — `aliases.yaml` → `aliases.secrets.env` — as `NAME=value`
 * lines, and the YAML refers to them as `${NAME}`. The loader reads that file
 * with the config, so startup, reload and an admin write see the same values.
 *
 * The file must be private to its owner (mode 0600, as ssh insists for keys):
 * one readable by group or others is refused rather than silently used.
 */

/** A variable name a secrets line may define. */
export const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Largest secrets file read: 1 MB (a few thousand keys). */
export const MAX_SECRETS_FILE_BYTES = 1024 * 1024;

/** The secrets file that belongs to a config file. */
export function secretsPathFor(configPath: string): string {
  const base = basename(configPath, extname(configPath));
  return join(dirname(configPath), `${base}.secrets.env`);
}

/** `NAME=value` lines → a map; blank lines and `#` comments are skipped. */
export function parseSecrets(text: string, source: string): Map<string, string> {
  const secrets = new Map<string, string>();
  text.split('\n').forEach((raw, index) => {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '' || line.trimStart().startsWith('#')) return;
    const eq = line.indexOf('=');
    const name = eq === -1 ? '' : line.slice(0, eq).trim();
    // The message names the line, never its content: the content is a key.
    if (!SECRET_NAME.test(name)) {
      throw new RouterError('invalid_config', `invalid secrets file ${source} line ${index + 1}: expected NAME=value`);
    }
    secrets.set(name, line.slice(eq + 1));
  });
  return secrets;
}

/** The secrets beside `configPath` (empty when there is no such file). */
export async function readSecretsFile(configPath: string): Promise<Map<string, string>> {
  const path = secretsPathFor(configPath);
  let mode: number;
  let size: number;
  try {
    ({ mode, size } = await stat(path));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw new RouterError('invalid_config', `invalid secrets file ${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  if ((mode & 0o077) !== 0) {
    throw new RouterError('invalid_config', `invalid secrets file ${path}: it is readable by others (mode ${(mode & 0o777).toString(8)}); run chmod 600 on it`);
  }
  if (size > MAX_SECRETS_FILE_BYTES) {
    throw new RouterError('invalid_config', `invalid secrets file ${path}: larger than ${MAX_SECRETS_FILE_BYTES} bytes`);
  }
  let text: string;
  try {
    // The config's own reader: a regular file only (a FIFO would block), bounded.
    text = await readConfigFile(path, MAX_SECRETS_FILE_BYTES);
  } catch (error) {
    const reason = error instanceof ConfigFileError ? error.message : ((error as NodeJS.ErrnoException).code ?? 'unreadable');
    throw new RouterError('invalid_config', `invalid secrets file ${path}: cannot read it (${reason})`);
  }
  return parseSecrets(text, path);
}

/**
 * The variables a config is interpolated with: the process environment wins
 * over the secrets file, as with any `.env` file, so an operator can still
 * override a stored key from outside.
 */
export function withSecrets(env: Env, secrets: ReadonlyMap<string, string>): Env {
  if (secrets.size === 0) return env;
  const merged: Record<string, string | undefined> = Object.fromEntries(secrets);
  for (const [name, value] of Object.entries(env)) if (value !== undefined) merged[name] = value;
  return merged;
}
