import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from './config/load-config.js';
import { otherAliases } from './config/test-configs.js';
import { createRouter } from './router.js';
import type { ReloadEvent } from './types.js';

let a: FakeUpstream;
let b: FakeUpstream;
let dir: string;

beforeAll(async () => {
  [a, b] = await Promise.all([startFakeOpenAI({ host: '127.0.0.1' }), startFakeOpenAI({ host: '127.0.0.1' })]);
  dir = await mkdtemp(join(tmpdir(), 'llm-router-reload-'));
});
afterAll(async () => {
  await Promise.all([a.close(), b.close(), rm(dir, { recursive: true, force: true })]);
});

const yaml = (chain: string) => `
providers:
  a: { type: openai, base_url: "${a.baseUrl}", api_key_required: false }
  b: { type: openai, base_url: "${b.baseUrl}", api_key_required: false }
aliases:
  mana/long-form: ${chain}
${otherAliases('mana/long-form')}`;

describe('reload', () => {
  it('a broken file keeps the old config serving; a good one swaps atomically; health survives', async () => {
    const path = join(dir, 'aliases.yaml');
    await writeFile(path, yaml('[a/m1, b/m2]'));
    const router = createRouter({ config: await loadConfigFile(path, { env: {} }), configPath: path, env: {} });
    const events: ReloadEvent[] = [];
    router.on('reload', (e) => events.push(e));
    const ask = () => router.execute({ model: 'mana/long-form', body: { messages: [{ role: 'user', content: 'x' }] }, stream: false });
    try {
      expect((await ask()).outcome.target).toBe('a/m1');

      await writeFile(path, 'aliases:\n  mana/long-form: []\n');
      const bad = await router.reload();
      expect(bad.ok).toBe(false);
      if (!bad.ok) expect(bad.error).toMatch(/long-form/);
      expect(events.at(-1)).toMatchObject({ ok: false, source: path });
      expect((await ask()).outcome.target).toBe('a/m1');

      // Make provider b unhealthy, then reload a config that still uses it.
      b.setProbeStatus(503);
      await router.probeNow();
      await router.probeNow();
      const before = router.config;
      await writeFile(path, yaml('[b/m2, a/m1]'));
      expect(await router.reload()).toEqual({ ok: true, source: path });
      expect(router.config).not.toBe(before);
      expect(events.at(-1)).toMatchObject({ ok: true });
      const result = await ask();
      expect(result.outcome.attempts.map((x) => `${x.target}:${x.outcome}`)).toEqual(['b/m2:skipped', 'a/m1:ok']);
    } finally {
      await router.close();
    }
  });

  it('a request in flight keeps the snapshot it started with', async () => {
    const path = join(dir, 'inflight.yaml');
    await writeFile(path, yaml('[a/m1]'));
    const router = createRouter({ config: await loadConfigFile(path, { env: {} }), configPath: path, env: {} });
    a.on('m1', { kind: 'answer', headerDelayMs: 200 });
    try {
      const pending = router.execute({ model: 'mana/long-form', body: { messages: [] }, stream: false });
      await a.waitForRequest();
      await writeFile(path, yaml('[b/m2]'));
      expect((await router.reload()).ok).toBe(true);
      expect((await pending).outcome.target).toBe('a/m1');
      expect((await router.execute({ model: 'mana/long-form', body: { messages: [] }, stream: false })).outcome.target).toBe('b/m2');
    } finally {
      a.reset();
      await router.close();
    }
  });

  it('reload without a config path reports an error and keeps serving', async () => {
    const path = join(dir, 'only.yaml');
    await writeFile(path, yaml('[a/m1]'));
    const router = createRouter({ config: await loadConfigFile(path, { env: {} }) });
    try {
      expect((await router.reload()).ok).toBe(false);
      expect(router.models()).toContain('mana/long-form');
    } finally {
      await router.close();
    }
  });
});
