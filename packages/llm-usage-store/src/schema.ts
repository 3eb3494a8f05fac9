/**
 * The tables as kysely sees them: one schema for SQLite and PostgreSQL.
 * Booleans are 0/1 integers and times epoch-ms bigints so that both engines
 * store and compare them the same way.
 */
import type { ColumnType } from 'kysely';
import type { CellNull, KindCells, Nullability } from './column-kinds.js';
import type { RequestColumnOf } from './request-columns.js';

/** A bigint column that the drivers hand back as a JS number (epoch ms fit in 2^53). */
type Int = ColumnType<number, number, number>;

/**
 * The requests table, one column per entry of `REQUEST_COLUMNS`
 * (request-columns.ts) with the cell its kind and nullability give it.
 */
export type UsageRequestsTable = {
  [C in RequestColumnOf as C['name']]: C['kind'] extends 'time' ? TimeCell<C['nullable']> : KindCells[C['kind']] | CellNull<C['nullable']>;
};
type TimeCell<N extends Nullability> = ColumnType<number | CellNull<N>, number | CellNull<N>, number | CellNull<N>>;

/** Attempts of requests stored before migration 0013; later ones are in their request's row. */
export interface UsageAttemptsTable {
  request_row_id: string;
  position: number;
  ts: Int;
  alias: string | null;
  target: string;
  provider: string;
  model: string;
  outcome: string;
  reason: string;
  upstream_status: number | null;
  duration_ms: number;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cached_tokens: number | null;
  cost_usd: number | null;
  failed_over: number;
  /** 1 when the request ended with this attempt (it counts as the request for its target). */
  final: number;
  /** 1 when this attempt answered after an earlier one failed over. */
  rescue: number;
  /** The request's time to first byte, on its final attempt only. */
  ttfb_ms: number | null;
}

/** One applied config: its text, the admin API's version hash of it, and what applied it. */
export interface ConfigVersionsTable {
  /** Sorts by time, then by order of recording within one process. */
  id: string;
  ts: Int;
  version: string;
  source: string;
  text: string;
}

/** The newest health transition of one provider or target, shared by all replicas. */
export interface HealthTransitionsTable {
  /** `provider:<name>` or `target:<provider/model>`. */
  subject: string;
  /** `provider_unhealthy` | `provider_healthy` | `cooldown`. */
  kind: string;
  /** Epoch ms the block ends; null for `provider_healthy`. */
  until: ColumnType<number | null, number | null, number | null>;
  reason: string | null;
  /** Epoch ms the transition happened. */
  at: Int;
  replica: string;
}

/** The one config all replicas serve (row id 1). */
export interface SharedConfigTable {
  id: number;
  version: string;
  text: string;
  ts: Int;
  replica: string;
}

/** Sums per minute, hour or day per alias, key, target or provider (rollups.ts); histograms as `[bin, count, …]` JSON. */
export interface UsageRollupsTable {
  /** `alias`, `key`, `target` or `provider`. */
  dim: string;
  /** 60 000 (a minute), 3 600 000 (an hour) or 86 400 000 (a UTC day). */
  span_ms: number;
  /** Start of the minute, hour or day, epoch ms. */
  bucket: Int;
  /** The alias, key id, target or provider; '' for requests without an alias (or a key). */
  key: string;
  requests: Int;
  errors: Int;
  rescued: Int;
  prompt_tokens: Int;
  completion_tokens: Int;
  cost_usd: number | null;
  durations: string;
  ttfbs: string;
}

/** A live replica (@mana/llm-shared-state's membership). */
export interface ReplicasTable {
  id: string;
  /** Epoch ms of its last heartbeat, by the database's clock. */
  last_seen: Int;
}

export interface UsageDatabase {
  usage_requests: UsageRequestsTable;
  usage_attempts: UsageAttemptsTable;
  config_versions: ConfigVersionsTable;
  health_transitions: HealthTransitionsTable;
  shared_config: SharedConfigTable;
  usage_rollups: UsageRollupsTable;
  replicas: ReplicasTable;
}
