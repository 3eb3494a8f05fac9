/**
 * Feeds the config history: every config the gateway applies (at start, on
 * SIGHUP or POST /admin/reload, by an admin write or rollback) goes to the
 * usage store with its version (the admin API's ETag). Recording is queued
 * after the apply; reading the file or writing the store failing is logged,
 * never a failed apply.
 */
import { readConfigFile } from '@mana/llm-router';
import { versionOf } from '../admin/config-store.js';
import type { Logger } from '../logging.js';
import type { ReloadTrigger } from '../reload.js';
import type { UsageRecorder } from './usage-recorder.js';

export type ConfigSource = 'startup' | 'signal' | 'reload' | 'admin' | 'rollback';

export interface ConfigHistoryFeed {
  /** A text that was just applied. */
  applied(text: string, source: ConfigSource): void;
  /** The config file as it is now, just loaded by `source`. */
  appliedFile(source: ConfigSource): Promise<void>;
}

/** The history's `source` of a reload, by what triggered it (POST /admin/reload is `reload`: `admin` is an admin write). */
export const HISTORY_SOURCE_OF_RELOAD: Record<ReloadTrigger, ConfigSource> = { signal: 'signal', admin: 'reload' };

export function configHistoryFeed(usageRecorder: UsageRecorder | undefined, configPath: string, logger: Logger): ConfigHistoryFeed {
  const applied = (text: string, source: ConfigSource): void => {
    usageRecorder?.recordConfig({ version: versionOf(text), text, source, time: Date.now() });
  };
  return {
    applied,
    async appliedFile(source) {
      if (usageRecorder === undefined) return;
      try {
        applied(await readConfigFile(configPath), source);
      } catch (error) {
        logger.warn({ source, err: { message: (error as Error).message } }, 'config version not recorded in the history: the file cannot be read');
      }
    },
  };
}
