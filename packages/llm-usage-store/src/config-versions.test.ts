/**
 * Config history on both real engines: a SQLite file and a PostgreSQL database.
 * The tests run in order on one store and build on each other's rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CONFIG_VERSIONS } from './config-versions.js';
import { ENGINES, testLocation, type TestLocation } from './test-stores.js';
import { UsageStore } from './usage-store.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const A = 'aliases:\n  fast: groq/llama\n';
const B = 'aliases:\n  fast: ollama/gemma\n';

describe.each(ENGINES)('config history on %s', (engine) => {
  let where: TestLocation;
  let store: UsageStore;

  beforeAll(async () => {
    where = await testLocation(engine);
    store = new UsageStore({ location: where.location });
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    await where?.cleanup();
  });

  it('keeps each applied config newest first, skipping a reload of the newest one, and finds one with its predecessor', async () => {
    expect(await store.addConfigVersion({ version: 'va', text: A, source: 'startup', time: T0 })).toBe(true);
    expect(await store.addConfigVersion({ version: 'va', text: A, source: 'signal', time: T0 + 1 })).toBe(false);
    expect(await store.addConfigVersion({ version: 'vb', text: B, source: 'admin', time: T0 + 2 })).toBe(true);
    // Back to A in the same millisecond: still ordered after B.
    expect(await store.addConfigVersion({ version: 'va', text: A, source: 'rollback', time: T0 + 2 })).toBe(true);

    const page = await store.configVersions({});
    expect(page.versions.map((v) => [v.version, v.source, v.time])).toEqual([
      ['va', 'rollback', T0 + 2],
      ['vb', 'admin', T0 + 2],
      ['va', 'startup', T0],
    ]);
    expect(page.nextCursor).toBeNull();

    const found = await store.configVersion('vb');
    expect(found?.current).toEqual({ version: 'vb', source: 'admin', time: T0 + 2, text: B });
    expect(found?.previous).toEqual({ version: 'va', source: 'startup', time: T0, text: A });
    // A version applied twice is found as its newest application.
    expect((await store.configVersion('va'))?.previous?.version).toBe('vb');
    expect(await store.configVersion('nope')).toBeUndefined();
  });

  it('pages with a cursor and refuses a limit out of range or a foreign cursor', async () => {
    const first = await store.configVersions({ limit: 2 });
    expect(first.versions.map((v) => v.version)).toEqual(['va', 'vb']);
    const second = await store.configVersions({ limit: 2, cursor: first.nextCursor! });
    expect(second.versions.map((v) => [v.version, v.source])).toEqual([['va', 'startup']]);
    expect(second.nextCursor).toBeNull();
    await expect(store.configVersions({ limit: 101 })).rejects.toMatchObject({ name: 'UsageQueryError', param: 'limit' });
    await expect(store.configVersions({ cursor: "x' OR 1=1 --" })).rejects.toMatchObject({ name: 'UsageQueryError', param: 'cursor' });
  });

  it(`keeps the newest ${MAX_CONFIG_VERSIONS} configs`, async () => {
    for (let i = 0; i < MAX_CONFIG_VERSIONS; i++) {
      await store.addConfigVersion({ version: `v${i}`, text: `# ${i}\n`, source: 'admin', time: T0 + 10 + i });
    }
    const versions: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.configVersions({ limit: 100, cursor });
      versions.push(...page.versions.map((v) => v.version));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(versions).toHaveLength(MAX_CONFIG_VERSIONS);
    expect(versions[0]).toBe(`v${MAX_CONFIG_VERSIONS - 1}`);
    expect(versions.at(-1)).toBe('v0');
    expect(await store.configVersion('vb')).toBeUndefined();
  }, 60_000);
});
