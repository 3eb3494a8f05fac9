/** The shapes of the gateway answers the dashboard reads (see the Endpoints table in docs/api/README.md). */
import type { ServiceKeyJson } from '@mana/llm-service-keys/key-record';
import type { UsageAttemptJson, UsageRequestJson } from '@mana/llm-usage-store/usage-json';

export interface ProviderHealth {
  provider: string;
  type: string;
  configured: boolean;
  unconfigured_reason: string | null;
  healthy: boolean | null;
  last_check: string | null;
  consecutive_failures: number;
  unhealthy_until: string | null;
  last_error: string | null;
}

export interface HealthAnswer {
  status: 'ok' | 'degraded' | 'down';
  checked_at: string;
  config: { source: string; loaded_at: string };
  providers: ProviderHealth[];
  usage: { status: 'ok' | 'failing' | 'off'; store?: string; queued?: number; written?: number; dropped?: number; last_error?: string | null };
}

export type TargetState = 'healthy' | 'unhealthy' | 'cooling_down' | 'unconfigured' | 'model_missing';

export interface LiveTarget {
  target: string;
  provider: string;
  model: string;
  weight: number;
  state: TargetState;
  until: string | null;
  reason: string | null;
  /** Its recent time to first token on streams; null until it answered one. */
  first_token_ms: number | null;
  /** Only for a target with a `max_concurrency`. */
  load?: { counts: 'provider' | 'target'; in_flight: number; limit: number; queued: number; saturated: boolean };
  /** Only for a target with an `rpm` / `tpm`: each window's use over the last minute. */
  rate?: { unit: 'rpm' | 'tpm'; counts: 'provider' | 'target'; used: number; limit: number; queued: number; saturated: boolean }[];
}

export interface LiveAlias {
  alias: string;
  description: string;
  kind: 'chat' | 'embedding';
  strategy: string | null;
  chain: LiveTarget[];
}

export interface AdminChainEntry {
  id: string;
  target: string;
  weight?: number;
  settings?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface AdminAlias {
  name: string;
  description: string;
  strategy: string | null;
  settings?: Record<string, unknown>;
  chain: AdminChainEntry[];
  required: boolean;
  [key: string]: unknown;
}

export interface AdminProvider {
  name: string;
  built_in: boolean;
  type: string | null;
  base_url: string | null;
  api_key_set: boolean;
  api_key_env: string | null;
  api_key_required: boolean | null;
  check_models: boolean;
  propagate_trace: boolean;
  used_by: string[];
}

export interface Percentiles {
  p50: number | null;
  p95: number | null;
}

/** One row of a summary; it names its group under the `group_by` it was asked for. */
export interface SummaryRow {
  alias?: string;
  target?: string;
  provider?: string;
  /** The calling key's id (`group_by=key`); null sums the requests made without one. */
  key?: string | null;
  requests: number;
  errors: number;
  rescued: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number | null;
  duration_ms: Percentiles;
  ttfb_ms: Percentiles;
}

export interface Summary {
  group_by: string;
  since: string;
  until: string | null;
  data: SummaryRow[];
}

/** A stored request and its attempts as the usage API serves them: the usage store's declaration, not a copy. */
export type StoredRequest = UsageRequestJson;
export type StoredAttempt = UsageAttemptJson;

export interface RequestPage {
  data: StoredRequest[];
  next_cursor: string | null;
}

export interface HistoryEntry {
  version: string;
  source: string;
  applied_at: string;
}

export interface HistoryPage {
  current_version: string;
  data: HistoryEntry[];
  next_cursor: string | null;
}

export interface HistoryVersion extends HistoryEntry {
  text: string;
  previous_version: string | null;
  diff: string | null;
}

/**
 * A key as GET /admin/keys lists it: a service key (the package's public
 * view) or a read-only MANA_LLM_API_KEYS key (`env-1`, …), which has no
 * creation time. Never a secret: that is only in a create's or a rotation's
 * answer (`IssuedAdminKey`).
 */
export interface AdminKey extends Omit<ServiceKeyJson, 'created_at'> {
  object: 'service_key';
  kind: 'service' | 'static';
  read_only: boolean;
  created_at: string | null;
}

/** The answer of POST /admin/keys and POST /admin/keys/{id}/rotate: the key and its secret, this once. */
export interface IssuedAdminKey extends AdminKey {
  key: string;
}
