import type { Usage } from '../types.js';
import { isPlainObject } from '../plain-object.js';

/**
 * Token counts as upstreams report them, checked in this one place for every
 * dialect (OpenAI-compatible answers and stream chunks, Ollama chat, embeddings)
 * before they reach metrics, usage records and costs.
 *
 * Why: the counts are someone else's numbers. One `prompt_tokens: -5` made the
 * tokens counter go down, and prom-client then refused every later scrape;
 * `1e308` or `2.5` were stored and summed into nonsense. A count that is not a
 * plausible count makes the call's usage unknown (as if none was reported),
 * never partly trusted.
 */

/** The largest count believed (1e9 tokens: far beyond any context window or answer today). */
export const MAX_TOKEN_COUNT = 1_000_000_000;

/** `value` when it is a non-negative integer up to MAX_TOKEN_COUNT; otherwise undefined. */
export function tokenCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_TOKEN_COUNT ? value : undefined;
}

/** Reported counts; `null` or absent optional members are "not reported". */
export interface ReportedCounts {
  readonly prompt: unknown;
  readonly completion: unknown;
  /** Absent: prompt + completion. */
  readonly total?: unknown;
  readonly cached?: unknown;
  readonly reasoning?: unknown;
}

/** The usage those counts describe; undefined (unknown) when prompt or completion is missing or any count is implausible. */
export function checkedUsage(counts: ReportedCounts): Usage | undefined {
  const prompt = tokenCount(counts.prompt);
  const completion = tokenCount(counts.completion);
  if (prompt === undefined || completion === undefined) return undefined;
  const total = reported(counts.total) ? tokenCount(counts.total) : prompt + completion;
  if (total === undefined) return undefined;
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total };
  if (reported(counts.cached)) {
    const cached = tokenCount(counts.cached);
    if (cached === undefined) return undefined;
    usage.cached_tokens = cached;
  }
  if (reported(counts.reasoning)) {
    const reasoning = tokenCount(counts.reasoning);
    if (reasoning === undefined) return undefined;
    usage.reasoning_tokens = reasoning;
  }
  return usage;
}

/** OpenAI `usage` (chat answers and stream chunks); undefined when absent or not plausible counts. */
export function toUsage(value: unknown): Usage | undefined {
  if (!isPlainObject(value)) return undefined;
  const details = value.prompt_tokens_details;
  const completionDetails = value.completion_tokens_details;
  return checkedUsage({
    prompt: value.prompt_tokens,
    completion: value.completion_tokens,
    total: value.total_tokens,
    cached: isPlainObject(details) ? details.cached_tokens : undefined,
    reasoning: isPlainObject(completionDetails) ? completionDetails.reasoning_tokens : undefined,
  });
}

function reported(value: unknown): boolean {
  return value !== undefined && value !== null;
}
