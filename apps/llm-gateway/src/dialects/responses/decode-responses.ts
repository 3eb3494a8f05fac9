/**
 * An OpenAI Responses request (`POST /v1/responses`) → the router's
 * OpenAI-shaped chat request, and what the answer repeats of it (`echo`: the
 * spec's Response states the request's instructions, tools, sampling, …):
 *
 *   instructions, input         → messages (decode-input.ts)
 *   tools, tool_choice, parallel_tool_calls → chat's (decode-tools.ts)
 *   text.format                 → response_format: text → none, json_object → json_object,
 *                                 json_schema {name, schema, strict, description} → json_schema
 *                                 (so an alias's `fail_over_on: [invalid_json]` and its schema
 *                                 check apply, as on chat)
 *   text.verbosity              → verbosity (optional: see below)
 *   max_output_tokens           → max_completion_tokens (1 … MAX_OUTPUT_TOKENS)
 *   temperature, top_p, user, metadata → the same names
 *   reasoning.effort            → reasoning_effort, optional: a target whose protocol
 *                                 cannot honour it (anthropic) gets the request without it
 *                                 rather than being skipped (Codex sends it by default)
 *   previous_response_id, conversation, background, prompt → 400 (stateless.ts)
 *   store, include, stream_options, service_tier, truncation, prompt_cache_key,
 *   safety_identifier, max_tool_calls → accepted and not translated: they ask the
 *                                 upstream for nothing the answer depends on
 *
 * Fields OpenAI adds later are ignored the same way rather than refused.
 * `model` follows the chat route's rule: absent, the default alias applies.
 */
import type { ChatRequestBody } from '@mana/llm-router';
import { booleanField, numberField, stringField } from '../../http/body-fields.js';
import { Refusal, typeName, wrongType } from '../../http/refusal.js';
import { MAX_OUTPUT_TOKENS, modelError } from '../routed-body.js';
import { isPlainObject } from '../../plain-object.js';
import type { Decoded } from '../codec.js';
import { decodeInput } from './decode-input.js';
import { decodeTools } from './decode-tools.js';
import { refuseStatefulFields } from './stateless.js';

type Json = Record<string, unknown>;

/** The spec's ReasoningEffort values. */
const EFFORTS = new Set(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);
const VERBOSITIES = new Set(['low', 'medium', 'high']);

export function decodeResponsesRequest(parsed: unknown): Decoded {
  try {
    if (!isPlainObject(parsed)) throw new Refusal('invalid_type', `The request body must be a JSON object, got ${typeName(parsed)}.`, undefined);
    const badModel = modelError(parsed.model);
    if (badModel !== undefined) throw new Refusal(badModel.code, badModel.message, badModel.param);
    refuseStatefulFields(parsed);
    const model = parsed.model as string | undefined;
    const stream = booleanField(parsed, 'stream') === true;
    booleanField(parsed, 'store');
    const instructions = stringField(parsed, 'instructions');
    // `stream` always set: the adapter then has nothing to add to the body (no copy of it).
    const chat: ChatRequestBody = { messages: decodeInput(instructions, parsed.input), stream };
    const optional: string[] = [];
    const tools = decodeTools(parsed, chat);
    const echo: Json = {
      instructions: instructions ?? null,
      ...sampling(parsed, chat),
      text: textFormat(parsed.text, chat, optional),
      reasoning: reasoning(parsed.reasoning, chat, optional),
      ...tools.echo,
    };
    refuseLogprobs(parsed);
    return {
      ok: true,
      body: chat,
      model,
      stream,
      optionalParameters: optional.length === 0 ? undefined : optional,
      nativeOnly: tools.nativeOnly.length === 0 ? undefined : tools.nativeOnly,
      echo,
      toolNames: tools.toolNames,
    };
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    return { ok: false, error: { code: error.code, message: error.message, param: error.param } };
  }
}

/** temperature, top_p, max_output_tokens, user, metadata → chat's; returns what the answer repeats of them. */
function sampling(body: Json, chat: ChatRequestBody): Json {
  const temperature = numberField(body, 'temperature');
  if (temperature !== undefined) chat.temperature = temperature;
  const topP = numberField(body, 'top_p');
  if (topP !== undefined) chat.top_p = topP;
  const max = body.max_output_tokens;
  if (max !== undefined && max !== null) {
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > MAX_OUTPUT_TOKENS) {
      throw new Refusal('invalid_request', `'max_output_tokens' must be a whole number from 1 to ${MAX_OUTPUT_TOKENS}, got ${JSON.stringify(max)?.slice(0, 40)}.`, 'max_output_tokens');
    }
    chat.max_completion_tokens = max;
  }
  const user = stringField(body, 'user');
  if (user !== undefined && user !== '') chat.user = user;
  const metadata = metadataOf(body.metadata);
  if (Object.keys(metadata).length > 0) chat.metadata = metadata;
  const echo: Json = { temperature: temperature ?? null, top_p: topP ?? null, max_output_tokens: max ?? null, metadata };
  if (user !== undefined) echo.user = user;
  return echo;
}

/** `metadata`: string values only, as the spec's Metadata (the answer repeats it). */
function metadataOf(value: unknown): Json {
  if (value === undefined || value === null) return {};
  if (!isPlainObject(value)) throw wrongType('metadata', 'an object of strings', value);
  for (const key in value) {
    if (typeof value[key] !== 'string') throw wrongType(`metadata.${key.slice(0, 64)}`, 'a string', value[key]);
  }
  return value;
}

/** `text.format` → response_format; `text.verbosity` → verbosity (optional). Returns the answer's `text`. */
function textFormat(text: unknown, chat: ChatRequestBody, optional: string[]): Json {
  if (text === undefined || text === null) return { format: { type: 'text' } };
  if (!isPlainObject(text)) throw wrongType('text', 'an object', text);
  const echo: Json = { format: format(text.format, chat) };
  const verbosity = text.verbosity;
  if (verbosity !== undefined && verbosity !== null) {
    if (typeof verbosity !== 'string' || !VERBOSITIES.has(verbosity)) throw new Refusal('invalid_request', `text.verbosity must be 'low', 'medium' or 'high'.`, 'text.verbosity');
    chat.verbosity = verbosity;
    optional.push('verbosity');
    echo.verbosity = verbosity;
  }
  return echo;
}

function format(value: unknown, chat: ChatRequestBody): Json {
  if (value === undefined || value === null) return { type: 'text' };
  if (!isPlainObject(value)) throw wrongType('text.format', 'an object', value);
  switch (value.type) {
    case 'text':
      return { type: 'text' };
    case 'json_object':
      chat.response_format = { type: 'json_object' };
      return { type: 'json_object' };
    case 'json_schema': {
      const { name, schema, strict, description } = value;
      if (typeof name !== 'string' || name === '') throw wrongType('text.format.name', 'a non-empty string', name);
      // Its content is checked where chat's is (the router's response-schema.ts), not twice.
      if (schema === undefined || schema === null) throw new Refusal('invalid_request', `text.format.schema is required: the JSON Schema the answer must match.`, 'text.format.schema');
      if (!isPlainObject(schema) && typeof schema !== 'boolean') throw wrongType('text.format.schema', 'a JSON Schema (an object)', schema);
      if (strict !== undefined && strict !== null && typeof strict !== 'boolean') throw wrongType('text.format.strict', 'a boolean', strict);
      if (description !== undefined && description !== null && typeof description !== 'string') throw wrongType('text.format.description', 'a string', description);
      const spec: Json = { name, schema };
      if (typeof strict === 'boolean') spec.strict = strict;
      if (typeof description === 'string') spec.description = description;
      chat.response_format = { type: 'json_schema', json_schema: spec };
      return { type: 'json_schema', ...spec, strict: strict ?? null };
    }
    default:
      throw new Refusal('invalid_request', `text.format.type must be 'text', 'json_object' or 'json_schema'.`, 'text.format.type');
  }
}

/** `reasoning.effort` → reasoning_effort, optional; returns the answer's `reasoning` (null when none was asked for). */
function reasoning(value: unknown, chat: ChatRequestBody, optional: string[]): Json | null {
  if (value === undefined || value === null) return null;
  if (!isPlainObject(value)) throw wrongType('reasoning', 'an object', value);
  const effort = value.effort;
  if (effort !== undefined && effort !== null) {
    if (typeof effort !== 'string' || !EFFORTS.has(effort)) throw new Refusal('invalid_request', `reasoning.effort must be one of ${[...EFFORTS].join(', ')}.`, 'reasoning.effort');
    chat.reasoning_effort = effort;
    optional.push('reasoning_effort');
  }
  // The summary asks for reasoning summaries, which chat targets do not write: none comes back.
  return { effort: effort ?? null, summary: null };
}

/** Log-probabilities have no translation here: asked for, they are refused rather than left out of the answer. */
function refuseLogprobs(body: Json): void {
  const top = body.top_logprobs;
  if (top !== undefined && top !== null && top !== 0) {
    throw new Refusal('unsupported_request', `top_logprobs is not translated for chat targets: leave it out.`, 'top_logprobs');
  }
  const include = body.include;
  if (include === undefined || include === null) return;
  if (!Array.isArray(include) || !include.every((v) => typeof v === 'string')) throw wrongType('include', 'an array of strings', include);
  if (include.includes('message.output_text.logprobs')) {
    throw new Refusal('unsupported_request', `include 'message.output_text.logprobs' is not translated for chat targets: leave it out.`, 'include');
  }
}
