/**
 * The usage records as the gateway hands them in and as the queries hand them
 * back. Times are epoch milliseconds; durations are milliseconds; cost is USD
 * and `null` when no price is configured (never 0 for "unknown").
 */
import type { StoredRequest } from './request-columns.js';

/** A stored request as queries return it (its fields are derived from the column declaration). */
export type { StoredRequest };

/** What one upstream call did. Skipped targets are not attempt records. */
export interface AttemptRecord {
  /** 0-based order among the request's upstream calls. */
  readonly position: number;
  readonly target: string;
  readonly provider: string;
  readonly model: string;
  /** `ok` | `failed` | `rejected` | `aborted` (the router's attempt outcomes that reached the network). */
  readonly outcome: string;
  readonly reason: string;
  readonly upstreamStatus: number | null;
  readonly durationMs: number;
  readonly promptTokens: number | null;
  readonly completionTokens: number | null;
  readonly cachedTokens: number | null;
  readonly costUsd: number | null;
  /** This attempt failed and another target was tried after it. */
  readonly failedOver: boolean;
}

/** One client request and its upstream calls. */
export interface RequestRecord {
  /** The gateway's X-Request-Id (a client may send its own, so not unique by itself). */
  readonly requestId: string;
  readonly time: number;
  /** A short, non-reversible fingerprint of the API key used; never the key. */
  readonly keyFingerprint: string | null;
  /** The public id of the key that called (`env-1`, … for MANA_LLM_API_KEYS); null with auth off and on rows written before migration 0016. */
  readonly keyId: string | null;
  /** The name of the key that called (the consuming service; `env-1`, … for MANA_LLM_API_KEYS); null as `keyId` is. */
  readonly keyName: string | null;
  readonly alias: string | null;
  /** The model the client asked for when it named a provider model directly. */
  readonly model: string | null;
  /** `provider/model` that answered (or rejected) the request. */
  readonly target: string | null;
  readonly provider: string | null;
  readonly status: number;
  readonly code: string | null;
  readonly stream: boolean;
  readonly priority: string | null;
  /** Upstream calls made (the attempt records). */
  readonly attemptCount: number;
  /** Every planned target with its outcome, skipped ones included, as the request log shows them. */
  readonly plan: readonly PlannedTarget[];
  readonly durationMs: number;
  readonly ttfbMs: number | null;
  readonly promptTokens: number | null;
  readonly completionTokens: number | null;
  readonly cachedTokens: number | null;
  readonly costUsd: number | null;
  readonly attempts: readonly AttemptRecord[];
  /** The gateway replica that served it (`--replica-name`); null when unnamed. */
  readonly replica: string | null;
  /** The inbound API it came through (`chat_completions`, `embeddings`, `messages`, …); null on rows written before migration 0014. */
  readonly api: string | null;
  /** The trace id (32 hex digits) of the request's spans while tracing was on; null without tracing and on rows written before migration 0015. */
  readonly traceId: string | null;
  /**
   * How `hedge_after` went (`not_needed`, `won`, `lost`, `failed`, `unavailable`); null when it was
   * not in force, and on rows written before migration 0018.
   */
  readonly hedge: string | null;
}

export interface PlannedTarget {
  readonly target: string;
  readonly outcome: string;
  readonly reason: string;
}

export interface RequestFilter {
  /** Inclusive lower bound, epoch ms. */
  readonly since?: number;
  /** Exclusive upper bound, epoch ms. */
  readonly until?: number;
  readonly alias?: string;
  readonly target?: string;
  readonly status?: number;
  readonly code?: string;
  /** A key's id (`keyId`): only the requests that key made. */
  readonly key?: string;
  /** true: requests with at least one failed-over attempt; false: requests with none. */
  readonly failedOver?: boolean;
  /** Only requests that ended in an error or carry a failed-over attempt (the errors view). */
  readonly errorsOnly?: boolean;
}

export interface RequestPageQuery extends RequestFilter {
  /** Page size; 1 … MAX_PAGE_SIZE. */
  readonly limit?: number;
  /** Opaque cursor from a previous page's `nextCursor`. */
  readonly cursor?: string;
}

export interface RequestPage {
  readonly requests: readonly StoredRequest[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  readonly nextCursor: string | null;
}

export type SummaryGroup = 'alias' | 'target' | 'provider' | 'key';

export interface SummaryQuery {
  readonly since?: number;
  readonly until?: number;
  readonly groupBy: SummaryGroup;
}

export interface SummaryRow {
  /** The alias, target, provider or key id; `null` for requests without one (e.g. a direct model, rejected before routing, or auth off). */
  readonly key: string | null;
  /** Requests (by target/provider: calls that were not failed over). */
  readonly requests: number;
  /** Error events: failed requests plus failed-over attempts. */
  readonly errors: number;
  /** Requests answered after at least one failed-over attempt. */
  readonly rescued: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Sum of known costs; null when none of the rows had a price. */
  readonly costUsd: number | null;
  readonly durationMs: { readonly p50: number | null; readonly p95: number | null };
  readonly ttfbMs: { readonly p50: number | null; readonly p95: number | null };
}
