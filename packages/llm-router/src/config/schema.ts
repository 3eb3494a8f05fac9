import type { AliasKind, AnswerCheck, HostedToolsPolicy, OnAllUnhealthy, ProviderType, Settings } from '../types.js';

/**
 * The YAML vocabulary: every key the loader accepts at each level. Anything else
 * is rejected, because a typo (`unhealty_period`) silently ignored would leave
 * an operator believing a setting is in force when it is not.
 */

export const TOP_LEVEL_KEYS = ['settings', 'background_concurrency', 'usage_retention', 'providers', 'aliases'] as const;

export const PROVIDER_KEYS = [
  'type',
  'base_url',
  'api_key',
  'api_key_required',
  'check_models',
  'options',
  'headers',
  'secret_headers',
  'settings',
  'price',
  'unsupported_parameters',
  'propagate_trace',
  'max_concurrency',
  'rpm',
  'tpm',
] as const;

export const ALIAS_KEYS = [
  'description',
  'kind',
  'embedding_space',
  'max_batch',
  'strategy',
  'on_all_unhealthy',
  'fail_over_on_empty',
  'fail_over_on',
  'fail_over_on_context_length',
  'hedge_background',
  'settings',
  'chain',
] as const;

export const TARGET_KEYS = ['target', 'weight', 'settings', 'price', 'embedding_space', 'max_batch', 'max_concurrency', 'rpm', 'tpm'] as const;

export const PRICE_KEYS = ['input', 'output', 'cached_input'] as const;

export const ALIAS_KINDS: readonly AliasKind[] = ['chat', 'embedding'];

export { STRATEGIES } from './strategies.js';

export const ON_ALL_UNHEALTHY: readonly OnAllUnhealthy[] = ['fail', 'try_anyway'];

export const PROVIDER_TYPES: readonly ProviderType[] = ['openai', 'ollama', 'anthropic'];

export const HOSTED_TOOLS_POLICIES: readonly HostedToolsPolicy[] = ['refuse', 'drop'];

type SettingSpec =
  | { readonly field: keyof Settings; readonly kind: 'duration'; readonly positive?: boolean }
  | { readonly field: keyof Settings; readonly kind: 'count'; readonly min: number }
  | { readonly field: keyof Settings; readonly kind: 'size' }
  | { readonly field: keyof Settings; readonly kind: 'choice'; readonly choices: readonly string[] };

/** YAML `settings:` keys (snake_case, human durations) → Settings fields (ms; a choice as written). */
export const SETTING_SPECS: Readonly<Record<string, SettingSpec>> = {
  // A zero interval would probe in a busy loop, a zero timeout would fail every probe.
  probe_interval: { field: 'probeIntervalMs', kind: 'duration', positive: true },
  probe_timeout: { field: 'probeTimeoutMs', kind: 'duration', positive: true },
  failure_threshold: { field: 'failureThreshold', kind: 'count', min: 1 },
  unhealthy_period: { field: 'unhealthyPeriodMs', kind: 'duration' },
  rate_limit_cooldown: { field: 'rateLimitCooldownMs', kind: 'duration' },
  connect_timeout: { field: 'connectTimeoutMs', kind: 'duration', positive: true },
  first_byte_timeout: { field: 'firstByteTimeoutMs', kind: 'duration', positive: true },
  stream_idle_timeout: { field: 'streamIdleTimeoutMs', kind: 'duration', positive: true },
  queue_timeout: { field: 'queueTimeoutMs', kind: 'duration' },
  background_queue_timeout: { field: 'backgroundQueueTimeoutMs', kind: 'duration' },
  // 0 turns it off (e.g. for one alias when the global settings turn it on).
  hedge_after: { field: 'hedgeAfterMs', kind: 'duration' },
  retries: { field: 'retries', kind: 'count', min: 0 },
  retry_max_wait: { field: 'retryMaxWaitMs', kind: 'duration' },
  max_response_bytes: { field: 'maxResponseBytes', kind: 'size' },
  max_error_body_bytes: { field: 'maxErrorBodyBytes', kind: 'size' },
  max_stream_event_bytes: { field: 'maxStreamEventBytes', kind: 'size' },
  max_pre_commit_bytes: { field: 'maxPreCommitBytes', kind: 'size' },
  context_window: { field: 'contextWindow', kind: 'count', min: 1 },
  context_reserve: { field: 'contextReserve', kind: 'count', min: 0 },
  hosted_tools: { field: 'hostedTools', kind: 'choice', choices: HOSTED_TOOLS_POLICIES },
};

/** `fail_over_on:` list values, in the order docs/configuration.md gives them. */
export const ANSWER_CHECKS: readonly AnswerCheck[] = ['empty', 'content_filter', 'refusal', 'invalid_json'];

/** Aliases in the reserved `mana/` namespace: `mana/` + a lowercase slug. */
export const ALIAS_NAME = /^mana\/[a-z0-9][a-z0-9._-]*$/;

/**
 * Aliases outside `mana/` (names LiteLLM tooling registers, like `gpt-4o` or
 * `ha`): the characters of a model id, at most 200. Such a name must not start
 * with a configured `provider/`, or it would shadow that provider's direct targets.
 */
export const FOREIGN_ALIAS_NAME = /^[A-Za-z0-9][A-Za-z0-9._:@+/-]{0,199}$/;

/** Provider names become the `provider/` prefix of targets. */
export const PROVIDER_NAME = /^[a-z0-9][a-z0-9_-]*$/;
