import type { ChatRequestBody } from '../types.js';
import { isPlainObject } from '../plain-object.js';

/**
 * The parameters a translated protocol cannot honour, as data: a parameter
 * and when its value asks for what the protocol cannot do. A target that
 * would have to drop one is skipped before any call (ollama-parameters.ts,
 * anthropic-parameters.ts say why).
 */
export type Refusal = readonly [param: string, refuses: (value: unknown) => boolean];

/**
 * What only OpenAI's own API offers: several choices, log-probabilities,
 * token biases, audio, predicted outputs, web search. Neither Ollama's nor
 * Anthropic's protocol has a form for them.
 */
export const OPENAI_ONLY: readonly Refusal[] = [
  ['n', (v) => typeof v === 'number' && v !== 1],
  ['logprobs', (v) => v === true],
  ['top_logprobs', (v) => typeof v === 'number' && v > 0],
  ['logit_bias', (v) => isPlainObject(v) && Object.keys(v).length > 0],
  ['modalities', (v) => Array.isArray(v) && v.some((m) => m !== 'text')],
  ['audio', () => true],
  ['prediction', () => true],
  ['web_search_options', () => true],
];

/** The first parameter of `refusals` the body asks for, or undefined. Absent and `null` values ask for nothing. */
export function firstRefused(body: ChatRequestBody, refusals: readonly Refusal[]): string | undefined {
  for (const [param, refuses] of refusals) {
    const value = body[param];
    if (value !== undefined && value !== null && refuses(value)) return param;
  }
  return undefined;
}
