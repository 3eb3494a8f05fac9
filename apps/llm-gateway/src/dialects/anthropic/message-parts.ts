/**
 * What the JSON answer (message-json.ts) and the stream (message-stream.ts)
 * of `/v1/messages` say alike: the message id, its `model`, its stop reason
 * and its usage, from the router's OpenAI-shaped result.
 */
import type { Usage } from '@mana/llm-router';
import { stopReasonOf, type AnthropicStopReason } from '@mana/llm-router/anthropic';
import type { DecodedRequest } from '../codec.js';

let sequence = 0;
const ID_BASE = Date.now().toString(36);

/** `msg_…`, unique per process without a random draw per answer. */
export function messageId(): string {
  sequence = (sequence + 1) | 0;
  return `msg_${ID_BASE}${(sequence >>> 0).toString(36)}`;
}

export interface Stop {
  readonly stop_reason: AnthropicStopReason;
  readonly stop_sequence: string | null;
}

/**
 * `finish_reason` → `stop_reason`. OpenAI's `stop` does not say whether a
 * stop sequence ended the answer; vLLM's choices do (`stop_reason`: the
 * sequence met), and when that is one of the request's `stop_sequences` the
 * answer is `stop_sequence` with `stop_sequence` set.
 */
export function stopOf(finishReason: unknown, matched: unknown, request: DecodedRequest): Stop {
  const reason = stopReasonOf(finishReason);
  if (reason === 'end_turn' && typeof matched === 'string') {
    const stops = request.body.stop;
    if (Array.isArray(stops) && stops.includes(matched)) return { stop_reason: 'stop_sequence', stop_sequence: matched };
  }
  return { stop_reason: reason, stop_sequence: null };
}

/**
 * Anthropic's usage from the upstream's: `input_tokens` are the prompt tokens
 * not read from a cache (Anthropic counts cache reads apart, OpenAI within),
 * `cache_read_input_tokens` the cached ones when the upstream reported them.
 * Without a report, the gateway's estimates stand in (never a 0 for a prompt).
 */
export function usageJson(usage: Usage | undefined, estimatedInput: () => number, estimatedOutput: () => number): Record<string, number> {
  // An upstream that reports 0 prompt tokens reported nothing (Claude Code reads a 0 as an empty context).
  if (usage === undefined || usage.prompt_tokens === 0) {
    return { input_tokens: estimatedInput(), output_tokens: usage?.completion_tokens ?? estimatedOutput() };
  }
  const cached = usage.cached_tokens;
  if (cached === undefined) return { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens };
  return { input_tokens: Math.max(0, usage.prompt_tokens - cached), output_tokens: usage.completion_tokens, cache_read_input_tokens: cached };
}
