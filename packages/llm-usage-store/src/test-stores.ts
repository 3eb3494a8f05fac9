/**
 * The two engines the shared suites run on: a SQLite file in a temp folder and
 * a fresh PostgreSQL database (MANA_LLM_TEST_DATABASE_URL, or a throwaway
 * cluster started here). Not shipped: tsconfig.build.json leaves this file out.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestPostgres, type TestPostgres } from '@mana/llm-testkit';
import { afterEach } from 'vitest';
import type { StoreLocation } from './connections.js';
import { UsageStore, type UsageStoreOptions } from './usage-store.js';

export interface TestLocation {
  readonly location: StoreLocation;
  /** The PostgreSQL server behind it, when there is one. */
  readonly postgres: TestPostgres | undefined;
  cleanup(): Promise<void>;
}

export type Engine = 'sqlite' | 'postgres';
export const ENGINES: readonly Engine[] = ['sqlite', 'postgres'];

export async function testLocation(engine: Engine): Promise<TestLocation> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'mana-usage-'));
    return {
      location: { kind: 'sqlite', file: join(dir, 'usage.sqlite') },
      postgres: undefined,
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const postgres = await startTestPostgres();
  return { location: { kind: 'postgres', url: postgres.url }, postgres, cleanup: () => postgres.stop() };
}

/**
 * For a describe block whose tests each use one store: the function returned
 * opens a store on a fresh location of `engine`; the store is closed and its
 * location removed after each test.
 */
export function storePerTest(): (engine: Engine, options?: Omit<UsageStoreOptions, 'location'>) => Promise<{ store: UsageStore; where: TestLocation }> {
  let where: TestLocation | undefined;
  let store: UsageStore | undefined;
  afterEach(async () => {
    await store?.close();
    await where?.cleanup();
    store = undefined;
    where = undefined;
  });
  return async (engine, options = {}) => {
    where = await testLocation(engine);
    store = new UsageStore({ ...options, location: where.location });
    return { store, where };
  };
}
