/**
 * Retention through the built gateway: `usage_retention` in the config file
 * deletes old usage records in the background, and `--usage-retention` wins
 * over it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, waitUntil, type FakeUpstream } from '@mana/llm-testkit';
import { recordBatch, UsageStore, type RequestRecord } from '@mana/llm-usage-store';
import { aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';
import { ADMIN, admin } from './usage-client.js';

const HOUR = 3_600_000;
const FIRST_RETENTION_RUN_MS = 10_000; // the gateway's first retention run, 10 s after start

let upstream: FakeUpstream;
const dirs: string[] = [];

beforeAll(async () => {
  upstream = await startFakeOpenAI({ name: 'u' });
});

afterAll(async () => {
  await upstream?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function record(requestId: string, time: number): RequestRecord {
  return {
    requestId,
    time,
    keyFingerprint: null,
    keyId: null,
    keyName: null,
    replica: null,
    api: null,
    traceId: null,
    hedge: null,
    alias: 'mana/fast-text',
    model: 'mana/fast-text',
    target: 'u/m',
    provider: 'u',
    status: 200,
    code: null,
    stream: false,
    priority: null,
    attemptCount: 1,
    plan: [{ target: 'u/m', outcome: 'ok', reason: 'ok' }],
    durationMs: 12,
    ttfbMs: 10,
    promptTokens: 10,
    completionTokens: 5,
    cachedTokens: null,
    costUsd: null,
    attempts: [
      { position: 0, target: 'u/m', provider: 'u', model: 'm', outcome: 'ok', reason: 'ok', upstreamStatus: 200, durationMs: 11, promptTokens: 10, completionTokens: 5, cachedTokens: null, costUsd: null, failedOver: false },
    ],
  };
}

/** A data folder whose usage store already holds a request from 3 h ago and one from a minute ago. */
async function dataDirWithHistory(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'mana-usage-retention-'));
  dirs.push(dir);
  const store = new UsageStore({ location: { kind: 'sqlite', file: join(dir, 'usage.sqlite') } });
  const now = Date.now();
  await store.write(recordBatch([record('three-hours-ago', now - 3 * HOUR), record('a-minute-ago', now - 60_000)]));
  await store.close();
  return dir;
}

async function storedIds(gw: GatewayProcess): Promise<string[]> {
  const { body } = await admin(gw, '/admin/usage/requests');
  return body.data.map((r: Json) => r.request_id);
}

describe('usage retention', () => {
  it('usage_retention in the config deletes older records in the background; --usage-retention overrides it', async () => {
    const config = `usage_retention: 1h\nproviders:\n  u: { type: openai, base_url: "${upstream.baseUrl}", api_key: "sk-u" }\n${aliasesYaml({}, ['u/m'])}`;
    // The overriding one starts first, so its first retention run is over by the time the other's is.
    const overridden = await spawnGateway({ config, env: { MANA_LLM_ADMIN_KEY: ADMIN, MANA_LLM_DATA_DIR: await dataDirWithHistory() }, args: ['--usage-retention', '30d'] });
    const configured = await spawnGateway({ config, env: { MANA_LLM_ADMIN_KEY: ADMIN, MANA_LLM_DATA_DIR: await dataDirWithHistory() } });
    try {
      expect(await storedIds(configured)).toEqual(['a-minute-ago', 'three-hours-ago']);
      await waitUntil('the retention run to prune the old request', async () => (await storedIds(configured)).length === 1, FIRST_RETENTION_RUN_MS + 10_000);
      expect(await storedIds(configured)).toEqual(['a-minute-ago']);
      // The summary (rollups) forgets the deleted hours too.
      const summary = await admin(configured, `/admin/usage/summary?since=${new Date(Date.now() - 6 * HOUR).toISOString()}`);
      expect(summary.body.data).toEqual([expect.objectContaining({ alias: 'mana/fast-text', requests: 1 })]);
      // The other one's first run came earlier: it kept everything.
      expect(await storedIds(overridden)).toEqual(['a-minute-ago', 'three-hours-ago']);
    } finally {
      await Promise.all([configured.stop(), overridden.stop()]);
    }
  }, 60_000);
});
