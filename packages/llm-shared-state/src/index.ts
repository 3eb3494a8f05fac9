/** @mana/llm-shared-state — public API (re-exports only). */
export { DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_LIVENESS_WINDOW_MS, DEFAULT_RECONCILE_INTERVAL_MS, DEFAULT_REJECT_REPORT_INTERVAL_MS, MAX_PENDING_TRANSITIONS, SharedState, SharedStateUnavailable } from './shared-state.js';
export type { SharedConfigFollower, SharedStateName, SharedStateOptions, SharedStateStatus } from './shared-state.js';
export { CONFIG_CHANNEL } from './shared-config.js';
export type { ConfigNotice, ConfigWrite, SharedConfig, SwapResult } from './shared-config.js';
export { HEALTH_CHANNEL, MAX_CLOCK_AHEAD_MS, MAX_REASON_CHARS } from './health-rows.js';
export type { SharedTransition } from './health-rows.js';
export { NotifyListener, RECONNECT_FIRST_MS, RECONNECT_MAX_MS } from './notify-listener.js';
export type { NotifyListenerOptions } from './notify-listener.js';
export { REPLICAS_CHANNEL } from './replica-rows.js';
export type { ReplicaNotice } from './replica-rows.js';
