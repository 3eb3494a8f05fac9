/**
 * Where the gateway's database is: PostgreSQL when MANA_LLM_DATABASE_URL is
 * set, else the SQLite file under the data folder. Usage records and service
 * keys are stored there, each by its own store.
 */
import { join } from 'node:path';
import type { StoreLocation } from '@mana/llm-usage-store';

export const USAGE_DATABASE_FILE = 'usage.sqlite';

export function storeLocation(dataDir: string, databaseUrl: string | undefined): StoreLocation {
  return databaseUrl === undefined ? { kind: 'sqlite', file: join(dataDir, USAGE_DATABASE_FILE) } : { kind: 'postgres', url: databaseUrl };
}
