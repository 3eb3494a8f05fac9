/**
 * A config version written while another connection holds the SQLite write
 * lock: without retries it is lost (the store never waits for a lock).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageStore } from '@mana/llm-usage-store';
import { retryWhileLocked } from './retry-while-locked.js';

const dir = mkdtempSync(join(tmpdir(), 'mana-retry-locked-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('retryWhileLocked', () => {
  it('a write that meets a held lock succeeds once the lock is gone; other errors are not retried', async () => {
    const file = join(dir, 'usage.sqlite');
    const store = new UsageStore({ location: { kind: 'sqlite', file } });
    await store.open();
    const other = new BetterSqlite3(file);
    try {
      other.exec('BEGIN EXCLUSIVE');
      const input = { version: 'v-locked', source: 'admin', text: 'aliases: {}\n', time: Date.now() };
      await expect(store.addConfigVersion(input)).rejects.toMatchObject({ code: expect.stringMatching(/^SQLITE_BUSY/) });
      setTimeout(() => other.exec('ROLLBACK'), 150);
      await expect(retryWhileLocked(() => store.addConfigVersion(input))).resolves.toBe(true);
      expect((await store.configVersions({})).versions.map((v) => v.version)).toContain('v-locked');

      let calls = 0;
      const failing = () => {
        calls += 1;
        return Promise.reject(new Error('constraint failed'));
      };
      await expect(retryWhileLocked(failing)).rejects.toThrow('constraint failed');
      expect(calls).toBe(1);
    } finally {
      other.close();
      await store.close();
    }
  });
});
