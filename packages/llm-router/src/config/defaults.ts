import type { ProviderType, Settings } from '../types.js';

/**
 * Defaults for every tunable. A config may override them globally, per provider,
 * per alias and per target (in that order, the most specific wins).
 */
export const DEFAULT_SETTINGS: Settings = Object.freeze({
  probeIntervalMs: 30_000, // 30 s between health probes of a provider
  probeTimeoutMs: 3_000, // 3 s: a probe slower than this counts as a failure
  failureThreshold: 2, // consecutive failures before a provider is skipped
  unhealthyPeriodMs: 60_000, // 60 s skipped before the provider is tried again
  rateLimitCooldownMs: 15_000, // 15 s cooldown after a 429 without Retry-After
  connectTimeoutMs: 5_000, // 5 s to open a TCP/TLS connection
  firstByteTimeoutMs: 45_000, // 45 s to the first byte from a cloud provider
  // 30 s: inside a committed stream the model is loaded and generating, so tokens (or a provider's
  // keep-alive comments) come every few ms to seconds; a half-minute gap is a stuck upstream, local or cloud.
  // Apart from first_byte_timeout, whose 45 s / 300 s budget covers queueing and model loading before it.
  streamIdleTimeoutMs: 30_000,
  retries: 0, // retries of the same target before failing over
  retryMaxWaitMs: 10_000, // 10 s cap on a honoured Retry-After between retries
  // Bounds on what an upstream can make the gateway hold in memory (see docs/configuration.md, "settings").
  maxResponseBytes: 32 * 1024 * 1024, // 32 MiB: a non-stream answer; a real completion is KBs
  maxErrorBodyBytes: 64 * 1024, // 64 KiB: an error body is kept (and relayed) up to this, truncated beyond
  maxStreamEventBytes: 4 * 1024 * 1024, // 4 MiB: one SSE event / NDJSON line, held until it ends
  maxPreCommitBytes: 1024 * 1024, // 1 MiB: stream chunks held back before the first content delta
  contextWindow: undefined, // tokens; unknown unless configured (Ollama: its num_ctx, see context-window.ts)
  contextReserve: 512, // tokens kept for the answer when the request sets no max_tokens
  // A realtime request never waits for a full target while another one of its chain is usable.
  queueTimeoutMs: 0,
  // Background work keeps a busy local GPU fed instead of spending cloud quota; 10 min bounds a stuck box.
  backgroundQueueTimeoutMs: 600_000,
  // A request that offers a hosted tool is never answered as if the tool had run: dropping it is the operator's choice.
  hostedTools: 'refuse',
  // Off: a hedge spends a second upstream call; an operator turns it on where a slow first token costs more.
  hedgeAfterMs: 0,
});

/**
 * A local Ollama may have to load a model into memory before it answers, which
 * takes minutes on a cold GPU; a cloud endpoint that is silent for 45 s is stuck.
 */
export const OLLAMA_FIRST_BYTE_TIMEOUT_MS = 300_000; // 5 min

/** How many `background` requests may run at once when the config says nothing. */
export const DEFAULT_BACKGROUND_CONCURRENCY = 2;

/** The defaults that apply to a provider of this type before any override. */
export function defaultSettingsFor(type: ProviderType): Settings {
  if (type === 'ollama') {
    return Object.freeze({ ...DEFAULT_SETTINGS, firstByteTimeoutMs: OLLAMA_FIRST_BYTE_TIMEOUT_MS });
  }
  return DEFAULT_SETTINGS;
}
