/**
 * The config of several replicas, kept in PostgreSQL (`shared_config`).
 *
 * - Start: the database's config is served; an empty database is seeded with
 *   the YAML file (the first replica to get there wins, the others take its seed).
 * - Admin writes (any replica): compare-and-swap on the shared version, then
 *   NOTIFY; every replica fetches and applies the new text.
 * - SIGHUP and POST /admin/reload: re-read the shared config (a forced sync).
 *   The file is NOT applied: a hand edit would otherwise fork one replica from
 *   the rest. It is compared instead, and a difference is logged and shown by
 *   GET /admin/config (`file.matches_shared: false`).
 * Everything runs on the queue that orders reloads and writes.
 */
import { isRouterError, parseConfig, readConfigFile, readSecretsFile, withSecrets, type ConfigSnapshot, type Env, type ReloadResult } from '@mana/llm-router';
import { SharedStateUnavailable, type SharedConfig, type SharedConfigFollower, type SharedState } from '@mana/llm-shared-state';
import { AdminFailure } from '../admin/admin-failure.js';
import { versionOf, type SharedConfigAccess } from '../admin/config-store.js';
import type { Logger } from '../logging.js';
import type { SerialQueue } from '../serial-queue.js';

export interface SharedConfigSyncOptions {
  readonly shared: SharedState;
  readonly configPath: string;
  /** The file's text at start: the seed, and what is served while PostgreSQL cannot be reached. */
  readonly fileText: string;
  readonly env: Env;
  readonly serial: SerialQueue;
  readonly logger: Logger;
  /** This replica's name, on the shared config rows it writes. */
  readonly replica: string;
  /** Swaps a validated snapshot in (the router's applyConfig). */
  readonly apply: (snapshot: ConfigSnapshot) => void;
}

export class SharedConfigSync implements SharedConfigAccess, SharedConfigFollower {
  private text: string;
  private version: string;
  /** A shared version that does not parse here (e.g. a variable this replica lacks): logged once, not every round. */
  private rejected: string | undefined;
  /** The pull queued and not started yet, if any (see `pull`). */
  private waitingPull: Promise<void> | undefined;

  constructor(private readonly options: SharedConfigSyncOptions) {
    this.text = options.fileText;
    this.version = versionOf(options.fileText);
  }

  /** The version this replica serves. */
  get currentVersion(): string {
    return this.version;
  }

  /** The shared state saw a version this replica does not serve (a notification or a reconciliation round). */
  onConfigChanged(): void {
    void this.pull('notification');
  }

  current(): string {
    return this.text;
  }

  accepted(text: string): void {
    this.text = text;
    this.version = versionOf(text);
  }

  async fetch(): Promise<string> {
    try {
      return (await this.head()).text;
    } catch (error) {
      if (error instanceof SharedStateUnavailable) {
        throw new AdminFailure('shared_config_unavailable', 'The shared config database cannot be reached; the running config is unchanged. Retry when it is back (GET /v1/health shows shared.state).');
      }
      throw error;
    }
  }

  async swap(expectedVersion: string, text: string, source: 'admin' | 'rollback'): Promise<boolean> {
    try {
      const result = await this.options.shared.swapConfig(expectedVersion, { version: versionOf(text), text, source, replica: this.options.replica, time: Date.now() });
      return result.ok;
    } catch (error) {
      if (error instanceof SharedStateUnavailable) {
        throw new AdminFailure('shared_config_unavailable', 'The shared config database cannot be reached; nothing was written. Retry when it is back.');
      }
      throw error;
    }
  }

  /**
   * Applies the shared config if it is not the one served (start, notification,
   * reconciliation). Never throws. Coalesced: one pull runs and at most one
   * waits on the queue, and a pull asked for while one waits joins it (that one
   * reads the newest config anyway). Each notification used to queue a read of
   * its own: 3,000 of them held an admin write behind them for seconds.
   */
  pull(why: 'startup' | 'notification' | 'signal' | 'reload'): Promise<void> {
    if (this.waitingPull !== undefined) return this.waitingPull;
    const pull = this.options.serial(async () => {
      this.waitingPull = undefined; // started: what changes from now on needs the next pull
      await this.pullNow(why);
    });
    this.waitingPull = pull;
    return pull;
  }

  /** SIGHUP / POST /admin/reload in shared mode, run on the serial queue by the reloader: re-read the shared config; the file is only compared. */
  async reload(trigger: 'signal' | 'admin'): Promise<ReloadResult> {
    // Already on the serial queue (the reloader's).
    const source = 'shared database';
    const ok = await this.pullNow(trigger === 'signal' ? 'signal' : 'reload');
    await this.compareFile(trigger);
    return ok ? { ok: true, source } : { ok: false, source, error: 'the shared config database cannot be reached or its config is invalid here; the running config keeps serving' };
  }

  /** The shared config; when none is stored yet (PostgreSQL was down when every replica started), this replica's seeds it. */
  private async head(): Promise<SharedConfig> {
    const stored = await this.options.shared.readConfig();
    if (stored !== undefined) return stored;
    return this.options.shared.seedConfig({ version: this.version, text: this.text, source: 'startup', replica: this.options.replica, time: Date.now() });
  }

  private async pullNow(why: string): Promise<boolean> {
    const { logger } = this.options;
    let headText: string;
    let from: string;
    try {
      const head = await this.head();
      headText = head.text;
      from = head.replica;
    } catch (error) {
      logger.warn({ why, err: { message: (error as Error).message } }, 'shared config not read: serving this replica\'s current config');
      return false;
    }
    const version = versionOf(headText);
    if (version === this.version) return true;
    let snapshot: ConfigSnapshot;
    try {
      const secrets = await readSecretsFile(this.options.configPath);
      snapshot = parseConfig(headText, { source: this.options.configPath, env: withSecrets(this.options.env, secrets) });
    } catch (error) {
      if (this.rejected !== version) {
        this.rejected = version;
        const message = isRouterError(error) ? error.message : (error as Error).message;
        logger.error({ why, version, from, error: message }, 'shared config invalid on this replica: the previous config keeps serving');
      }
      return false;
    }
    const previous = this.version;
    this.options.apply(snapshot);
    this.accepted(headText);
    logger.info({ why, version, previous_version: previous, from, aliases: snapshot.aliases.size }, 'config applied from the shared database');
    return true;
  }

  private async compareFile(trigger: string): Promise<void> {
    let fileVersion: string;
    try {
      fileVersion = versionOf(await readConfigFile(this.options.configPath));
    } catch {
      return;
    }
    if (fileVersion === this.version) return;
    this.options.logger.warn(
      { trigger, file: this.options.configPath, file_version: fileVersion, shared_version: this.version },
      'the config file differs from the shared config and is not applied: with several replicas the database holds the config (change it through the admin API)',
    );
  }
}
