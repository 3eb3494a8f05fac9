/**
 * The config file as the single source of truth for admin writes. A write is
 * an edit of the file's text, applied one at a time (shared queue with
 * reloads):
 *
 *   read file → If-Match check (412) → edit → validate with the router's own
 *   parser (422, nothing written) → writable? (409) → secrets file, then the
 *   YAML, each replaced atomically → swap the snapshot in, as a reload does.
 *
 * The version is a hash of the file's bytes, so a hand edit is a new version
 * too, and `If-Match` catches it.
 *
 * With several replicas (`shared`), the config is the shared database's row
 * instead of the file: a write starts from the shared text, and lands by a
 * compare-and-swap on its version, so a write another replica made first
 * turns this one into a 412 just as a hand edit of the file does.
 */
import { createHash } from 'node:crypto';
import { ConfigFileError, MAX_CONFIG_BYTES, isRouterError, parseConfig, readConfigFile, readSecretsFile, secretsPathFor, withSecrets, type ConfigSnapshot, type Env } from '@mana/llm-router';
import type { Logger } from '../logging.js';
import type { SerialQueue } from '../serial-queue.js';
import { AdminFailure } from './admin-failure.js';
import { ReadOnlyError, assertWritable, writeFileAtomic } from './atomic-write.js';
import { writeSecretsFile } from './secrets-writer.js';
import { configData } from './yaml-edit.js';

export interface CurrentConfig {
  readonly text: string;
  readonly version: string;
  /** The file's data as plain values. */
  readonly data: Record<string, unknown>;
}

export interface ConfigEdit {
  /** The new file text (equal to the old one for a no-op). */
  readonly text: string;
  /** Secrets to add or replace in the secrets file. */
  readonly secrets?: ReadonlyMap<string, string>;
  /** What changed, for the log line (names only, never values). */
  readonly change: string;
}

export interface WriteRequest {
  /** `PUT /admin/aliases/mana/x`, for the log line. */
  readonly route: string;
  readonly ifMatch: string | undefined;
  /** A fingerprint of the admin key used (never the key). */
  readonly keyFingerprint: string;
  /** What the config history calls this write (default `admin`). */
  readonly source?: 'admin' | 'rollback';
}

export interface WriteOutcome {
  readonly changed: boolean;
  readonly previousVersion: string;
  readonly version: string;
  readonly snapshot: ConfigSnapshot;
  /** The state the edit was computed from. */
  readonly before: CurrentConfig;
  /** The file's data after the write. */
  readonly data: Record<string, unknown>;
}

/** The shared config of several replicas (see `replicas/shared-config-sync.ts`). */
export interface SharedConfigAccess {
  /** The text this replica serves: what GETs show (answers while PostgreSQL is down). */
  current(): string;
  /** The shared text now, to start a write from; throws an AdminFailure when PostgreSQL cannot be reached. */
  fetch(): Promise<string>;
  /** Stores `text` if the shared version is still `expectedVersion`; false when another replica wrote first. */
  swap(expectedVersion: string, text: string, source: 'admin' | 'rollback'): Promise<boolean>;
  /** `text` is applied on this replica. */
  accepted(text: string): void;
}

export interface ConfigStoreOptions {
  readonly path: string;
  readonly env: Env;
  readonly serial: SerialQueue;
  readonly logger: Logger;
  /** Swaps a validated snapshot in (the router's applyConfig). */
  readonly apply: (snapshot: ConfigSnapshot) => void;
  /** Told of each new file text once it is written and applied (the config history); must not throw. */
  readonly onApplied?: (text: string, source: 'admin' | 'rollback') => void;
  /** Set with MANA_LLM_DATABASE_URL: the config is shared by all replicas; the file only seeded it. */
  readonly shared?: SharedConfigAccess;
}

export function versionOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

export function etagOf(version: string): string {
  return `"${version}"`;
}

/** True when an `If-Match` header value names `version` (or is `*`). */
export function ifMatchAccepts(header: string, version: string): boolean {
  return header.split(',').some((raw) => {
    const tag = raw.trim().replace(/^W\//, '');
    return tag === '*' || tag === etagOf(version) || tag === version;
  });
}

export class ConfigStore {
  constructor(private readonly options: ConfigStoreOptions) {}

  get path(): string {
    return this.options.path;
  }

  /** Where the config a write changes lives: the shared database, or the file. */
  get mode(): 'shared' | 'file' {
    return this.options.shared === undefined ? 'file' : 'shared';
  }

  /** The config as this replica serves it (shared mode) or as the file holds it. */
  async read(): Promise<CurrentConfig> {
    const shared = this.options.shared;
    if (shared !== undefined) return current(shared.current());
    return current(await this.readFile());
  }

  /** The config file's text as it is on disk (in shared mode only the seed, and a hand edit's place). */
  async readFile(): Promise<string> {
    let text: string;
    try {
      // The loader's reader: a regular file of at most MAX_CONFIG_BYTES (1 MB).
      text = await readConfigFile(this.options.path);
    } catch (error) {
      const reason = error instanceof ConfigFileError ? error.message : ((error as NodeJS.ErrnoException).code ?? 'unreadable');
      throw new AdminFailure('invalid_config', `invalid config at ${this.options.path}: cannot read the file (${reason})`);
    }
    return text;
  }

  /** Runs one write: `plan` computes the edit from the current file (it may throw an AdminFailure). */
  write(request: WriteRequest, plan: (current: CurrentConfig) => ConfigEdit | Promise<ConfigEdit>): Promise<WriteOutcome> {
    return this.options.serial(() => this.writeNow(request, plan));
  }

  private async writeNow(request: WriteRequest, plan: (current: CurrentConfig) => ConfigEdit | Promise<ConfigEdit>): Promise<WriteOutcome> {
    const { path, env, logger, shared } = this.options;
    const before = shared === undefined ? await this.read() : current(await shared.fetch());
    if (request.ifMatch !== undefined && !ifMatchAccepts(request.ifMatch, before.version)) {
      throw new AdminFailure('version_conflict', `The config changed: If-Match ${request.ifMatch.slice(0, 100)} does not match the current version ${etagOf(before.version)}. Read it again and retry.`);
    }
    const edit = await plan(before);
    if (Buffer.byteLength(edit.text) > MAX_CONFIG_BYTES) throw new AdminFailure('invalid_config', `the edited config would be larger than ${MAX_CONFIG_BYTES} bytes`);

    const secrets = await this.secrets();
    const newSecrets = edit.secrets === undefined || edit.secrets.size === 0 ? undefined : new Map([...secrets, ...edit.secrets]);
    const secretsChanged = newSecrets !== undefined && [...edit.secrets!].some(([name, value]) => secrets.get(name) !== value);

    let snapshot: ConfigSnapshot;
    try {
      snapshot = parseConfig(edit.text, { source: path, env: withSecrets(env, newSecrets ?? secrets) });
    } catch (error) {
      if (isRouterError(error)) throw new AdminFailure('invalid_config', error.message);
      throw error;
    }

    const changed = edit.text !== before.text || secretsChanged;
    if (changed && shared !== undefined) {
      if (secretsChanged) {
        throw new AdminFailure(
          'config_read_only',
          'With MANA_LLM_DATABASE_URL the config is shared by every replica and secrets are never stored in the database: reference an environment variable set on every replica (api_key: ${VAR}, or a header such as Authorization: "Bearer ${VAR}") instead of a literal key or token.',
        );
      }
      if (!(await shared.swap(before.version, edit.text, request.source ?? 'admin'))) {
        throw new AdminFailure('version_conflict', `The shared config changed on another replica while this write ran (it started from ${etagOf(before.version)}). Read it again and retry.`);
      }
      this.options.apply(snapshot);
      shared.accepted(edit.text);
    } else if (changed) {
      try {
        await assertWritable(path);
        if (secretsChanged) await assertWritable(secretsPathFor(path));
        if (secretsChanged) await writeSecretsFile(path, newSecrets!);
        if (edit.text !== before.text) await writeFileAtomic(path, edit.text);
      } catch (error) {
        if (error instanceof ReadOnlyError) {
          throw new AdminFailure('config_read_only', `The config file cannot be written (${error.message}); the running config is unchanged. Edit it where it is mounted and reload.`);
        }
        throw error;
      }
      this.options.apply(snapshot);
      if (edit.text !== before.text) this.options.onApplied?.(edit.text, request.source ?? 'admin');
    }
    const version = versionOf(edit.text);
    logger.info(
      { route: request.route, change: changed ? edit.change : 'nothing (already as requested)', old_version: before.version, new_version: version, admin_key: request.keyFingerprint },
      'config written',
    );
    return { changed, previousVersion: before.version, version, snapshot, before, data: configData(edit.text) };
  }

  private async secrets(): Promise<Map<string, string>> {
    try {
      return await readSecretsFile(this.options.path);
    } catch (error) {
      if (isRouterError(error)) throw new AdminFailure('invalid_config', error.message);
      throw error;
    }
  }
}

function current(text: string): CurrentConfig {
  return { text, version: versionOf(text), data: configData(text) };
}
