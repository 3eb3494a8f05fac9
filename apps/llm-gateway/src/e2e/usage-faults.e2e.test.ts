/**
 * The embedded store's faults through the built gateway process: a lock held by
 * another process, a full disk, and `kill -9` while requests are in flight.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, waitUntil, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type Json } from './harness.js';
import { ADMIN, admin, chat, metric, storedRequests } from './usage-client.js';

const MODEL = 'mana/fast-text';
/** The batch writer's flush interval (the package's DEFAULT_FLUSH_INTERVAL_MS): the loss bound on kill -9 in docs/operations.md. */
const FLUSH_INTERVAL_MS = 1_000;

let upstream: FakeUpstream;

beforeAll(async () => {
  upstream = await startFakeOpenAI({ name: 'u' });
});

afterAll(async () => {
  await upstream?.close();
});

const config = () => `providers:\n  u: { type: openai, base_url: "${upstream.baseUrl}", api_key: "sk-u" }\n${aliasesYaml({}, ['u/m'])}`;

/** Writes zeros to `file` until the filesystem has no space left (bounded: a tmpfs of a few MB). */
function fillDisk(file: string): void {
  const chunk = Buffer.alloc(64 * 1024);
  const fd = openSync(file, 'w');
  try {
    for (let i = 0; i < 1_024; i++) writeSync(fd, chunk);
    throw new Error('the filesystem did not fill up within 64 MB');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}

describe('usage store faults through the gateway (SQLite)', () => {
  it('locked by another process: requests keep succeeding at normal speed, health and metric show it, recording resumes once the lock is gone', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mana-usage-lock-'));
    const gw = await spawnGateway({ config: config(), env: { MANA_LLM_ADMIN_KEY: ADMIN, MANA_LLM_DATA_DIR: dataDir } });
    const other = new BetterSqlite3(join(dataDir, 'usage.sqlite'));
    try {
      expect((await chat(gw, {}, MODEL)).status).toBe(200);
      await storedRequests(gw, 1);
      // Another process holds the write lock: every batch the gateway tries fails at once.
      other.exec('BEGIN EXCLUSIVE');
      const started = performance.now();
      for (let i = 0; i < 10; i++) expect((await chat(gw, {}, MODEL)).status).toBe(200);
      expect(performance.now() - started).toBeLessThan(2_000); // ten loopback requests; the lock adds nothing
      await waitUntil('/v1/health to show the usage store failing', async () => ((await (await fetch(`${gw.url}/v1/health`)).json()) as Json).usage.status === 'failing', 8_000);
      const health: Json = await (await fetch(`${gw.url}/v1/health`)).json();
      expect(health.status).toBe('degraded');
      expect(health.usage).toMatchObject({ queued: 10, last_error: expect.stringMatching(/locked/) });
      expect(await metric(gw, 'mana_llm_usage_store_up')).toBe(0);
      other.exec('ROLLBACK');
      expect(await storedRequests(gw, 11)).toHaveLength(11);
      expect(await metric(gw, 'mana_llm_usage_store_up')).toBe(1);
      expect(((await (await fetch(`${gw.url}/v1/health`)).json()) as Json).usage).toMatchObject({ status: 'ok', queued: 0 });
    } finally {
      other.close();
      await gw.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('disk full (a small tmpfs): /v1/health names SQLITE_FULL and its message, not the failed rollback, and requests keep succeeding', async (ctx) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mana-usage-full-'));
    let mounted = false;
    try {
      // A real full disk needs a filesystem of its own: mounting one needs root (CI runs as root); elsewhere this test is
      // skipped (the usage store's own test fills a database with max_page_count instead).
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dataDir], { stdio: 'ignore' });
        mounted = true;
      } catch {
        ctx.skip();
      }
      const gw = await spawnGateway({ config: config(), env: { MANA_LLM_ADMIN_KEY: ADMIN, MANA_LLM_DATA_DIR: dataDir } });
      try {
        expect((await chat(gw, {}, MODEL)).status).toBe(200);
        await storedRequests(gw, 1);
        fillDisk(join(dataDir, 'filler'));
        // Requests go on; their records cannot be written any more (a few per batch, as under live traffic).
        await waitUntil('/v1/health to show the usage store failing', async () => {
          expect((await chat(gw, {}, MODEL)).status).toBe(200);
          return ((await (await fetch(`${gw.url}/v1/health`)).json()) as Json).usage.status === 'failing';
        }, 20_000);
        const health: Json = await (await fetch(`${gw.url}/v1/health`)).json();
        expect(health.usage.last_error).toBe('database or disk is full (SQLITE_FULL)');
        expect((await chat(gw, {}, MODEL)).status).toBe(200);
      } finally {
        await gw.stop();
      }
    } finally {
      if (mounted) execFileSync('umount', [dataDir], { stdio: 'ignore' });
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('kill -9 under load: the store reopens cleanly, and only the requests of the last flush interval and of the batch being written may be missing', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mana-usage-kill-load-'));
    try {
      const env = { MANA_LLM_ADMIN_KEY: ADMIN, MANA_LLM_DATA_DIR: dataDir };
      const first = await spawnGateway({ config: config(), env });
      // Four clients send requests back to back; the process is killed while they run.
      const finishedAt = new Map<string, number>();
      let running = true;
      const client = async () => {
        while (running) {
          const res = await chat(first, {}, MODEL).catch(() => undefined);
          if (res?.status === 200) finishedAt.set(res.headers.get('x-request-id')!, Date.now());
          await res?.text().catch(() => undefined);
        }
      };
      const clients = Array.from({ length: 4 }, client);
      await new Promise((r) => setTimeout(r, 4_000));
      const killedAt = Date.now();
      first.signal('SIGKILL');
      running = false;
      await Promise.all(clients);
      await first.stop();
      expect(finishedAt.size).toBeGreaterThan(20);

      const second = await spawnGateway({ config: config(), env });
      try {
        expect((await chat(second, {}, MODEL)).status).toBe(200);
        const ids: string[] = [];
        let cursor = '';
        do {
          const { status, body } = await admin(second, `/admin/usage/requests?limit=500&until=${new Date(killedAt + 1).toISOString()}${cursor}`);
          expect(status).toBe(200);
          ids.push(...body.data.map((r: Json) => r.request_id as string));
          cursor = body.next_cursor === null ? '' : `&cursor=${body.next_cursor}`;
        } while (cursor !== '');
        const stored = new Set(ids);
        // docs/operations.md: missing are at most the requests of the last flush interval plus a batch being
        // written at the kill, which holds the interval before it. So whatever finished two intervals (and a
        // timer's lateness on a busy machine) before the kill is stored. A tighter cut (one interval + 500 ms)
        // failed under a CPU hog while the whole suite ran: the write of the batch before was still running.
        const mustBeStored = [...finishedAt].filter(([, at]) => at < killedAt - 2 * FLUSH_INTERVAL_MS - 250).map(([id]) => id);
        const missingAges = [...finishedAt].filter(([id]) => !stored.has(id)).map(([, at]) => killedAt - at);
        console.log(`kill -9 under load: ${finishedAt.size} finished, ${missingAges.length} missing, the oldest of them finished ${Math.max(0, ...missingAges)} ms before the kill`);
        expect(mustBeStored.length).toBeGreaterThan(10);
        expect(mustBeStored.filter((id) => !stored.has(id))).toEqual([]);
        // Nothing stored that no client saw finish, nothing twice.
        expect([...stored].every((id) => finishedAt.has(id))).toBe(true);
        expect(stored.size).toBe(ids.length);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
