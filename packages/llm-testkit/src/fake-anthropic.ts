import type { IncomingHttpHeaders } from 'node:http';
import { argumentsAsObject, argumentsAsString, isObject, type Dialect, type RenderedStream, type ResolvedAnswer } from './dialect.js';
import { startFakeUpstream } from './server.js';
import type { FakeUpstream, FakeUpstreamOptions } from './types.js';

/**
 * Anthropic's Messages API as api.anthropic.com speaks it (`anthropic-version:
 * 2023-06-01`): `POST /v1/messages` (JSON, or its SSE event sequence) and
 * `GET /v1/models`, with the key in `x-api-key` (or `Authorization: Bearer`).
 *
 * Written from Anthropic's API reference, independently of the router's
 * dialect: the router's tests then check its translation against the
 * protocol, not against a copy of its own tables.
 */

export interface FakeAnthropicOptions extends FakeUpstreamOptions {
  /** The only `x-api-key` accepted (401 `authentication_error` otherwise). Default: any non-empty key. */
  apiKey?: string;
}

/**
 * The API version this fake speaks (its shapes are that version's). A request
 * without the header, or naming another version, is refused as Anthropic
 * refuses a version it does not know; clients that default to a newer one
 * (the official SDK 1.x sends `2026-10-21`) set the header to this.
 */
const VERSION = '2023-06-01';

const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));
/** One SSE event: Anthropic names each event and repeats its name as `type` in the data. */
const event = (data: { type: string } & Record<string, unknown>): string => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

let seq = 0;
const nextId = (prefix: string): string => `${prefix}_fake${(++seq).toString(36)}`;

/**
 * Anthropic's `error.type` for a status, as its error reference pairs them.
 * Not imported from `@mana/llm-router/anthropic` on purpose: the testkit
 * cannot depend on the router (the router's tests depend on the testkit), and
 * a fake that shared the router's table could not catch a wrong entry in it.
 */
function errorType(status: number): string {
  const types: Record<number, string> = {
    400: 'invalid_request_error',
    401: 'authentication_error',
    402: 'billing_error',
    403: 'permission_error',
    404: 'not_found_error',
    413: 'request_too_large',
    429: 'rate_limit_error',
    500: 'api_error',
    529: 'overloaded_error',
  };
  return types[status] ?? (status < 500 ? 'invalid_request_error' : 'api_error');
}

function errorMessage(status: number, model: string): string {
  if (status === 401) return 'invalid x-api-key';
  if (status === 404) return `model: ${model}`;
  if (status === 429) return 'Number of request tokens has exceeded your per-minute rate limit (fake upstream)';
  if (status === 529) return 'Overloaded';
  if (status >= 500) return 'Internal server error (fake upstream)';
  return `Fake upstream error ${status}.`;
}

const errorJson = (status: number, message: string): Buffer =>
  json({ type: 'error', error: { type: errorType(status), message }, request_id: nextId('req') });

/** Anthropic's usage object: `input_tokens` is the uncached part of the prompt. */
function usage(a: ResolvedAnswer, outputTokens: number) {
  return {
    input_tokens: a.usage.prompt_tokens,
    cache_creation_input_tokens: a.usage.cache_creation_tokens ?? 0,
    cache_read_input_tokens: a.usage.cache_read_tokens ?? 0,
    output_tokens: outputTokens,
  };
}

function stopReason(a: ResolvedAnswer): string {
  return a.finishReason ?? (a.toolCalls.length > 0 ? 'tool_use' : a.refusal !== undefined ? 'refusal' : 'end_turn');
}

/** The answer's text: the refusal when the model declines (Anthropic has no separate refusal field), else the content. */
const textOf = (a: ResolvedAnswer): string => a.refusal ?? a.content ?? '';

const toolUseId = (id: string | undefined, i: number): string => id ?? `toolu_fake_${i}`;

/** The request's answers as content blocks: thinking, text, tool_use, in that order. */
function contentBlocks(a: ResolvedAnswer): Record<string, unknown>[] {
  const blocks: Record<string, unknown>[] = [];
  if (a.thinking !== undefined) blocks.push({ type: 'thinking', thinking: a.thinking, signature: 'fake-signature' });
  const text = textOf(a);
  if (text !== '') blocks.push({ type: 'text', text });
  a.toolCalls.forEach((t, i) => blocks.push({ type: 'tool_use', id: toolUseId(t.id, i), name: t.function.name, input: argumentsAsObject(t.function.arguments) }));
  return blocks;
}

/** Splits a tool's input JSON in two, as Anthropic streams it in several `input_json_delta` pieces. */
function jsonPieces(text: string): string[] {
  if (text.length < 2) return [text];
  const half = Math.floor(text.length / 2);
  return [text.slice(0, half), text.slice(half)];
}

/**
 * A stream rendered as Anthropic sends it: `message_start`, then per block
 * `content_block_start` / `content_block_delta`… / `content_block_stop` (a
 * `ping` after the first start), then `message_delta` (stop reason, output
 * tokens) and `message_stop`. Each frame is one text delta, or a whole
 * thinking or tool_use block; the stop of the block before it opens the next
 * frame, so a cut leaves a block open as a broken connection would.
 */
function renderStream(a: ResolvedAnswer, model: string): RenderedStream {
  const id = nextId('msg');
  const start = event({
    type: 'message_start',
    message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: usage(a, 1) },
  });
  const frames: string[] = [];
  let index = -1;
  const open = (block: Record<string, unknown>): string => {
    const prefix = index === -1 ? start : event({ type: 'content_block_stop', index });
    index++;
    return prefix + event({ type: 'content_block_start', index, content_block: block }) + (index === 0 ? event({ type: 'ping' }) : '');
  };
  const delta = (d: Record<string, unknown>): string => event({ type: 'content_block_delta', index, delta: d });
  if (a.thinking !== undefined) {
    frames.push(
      open({ type: 'thinking', thinking: '', signature: '' }) +
        delta({ type: 'thinking_delta', thinking: a.thinking }) +
        delta({ type: 'signature_delta', signature: 'fake-signature' }),
    );
  }
  a.parts.forEach((text, i) => frames.push((i === 0 ? open({ type: 'text', text: '' }) : '') + delta({ type: 'text_delta', text })));
  a.toolCalls.forEach((t, i) => {
    const input = argumentsAsString(t.function.arguments);
    frames.push(
      open({ type: 'tool_use', id: toolUseId(t.id, i), name: t.function.name, input: {} }) +
        jsonPieces(input)
          .map((partial_json) => delta({ type: 'input_json_delta', partial_json }))
          .join(''),
    );
  });
  const end =
    (index === -1 ? start : event({ type: 'content_block_stop', index })) +
    event({
      type: 'message_delta',
      delta: { stop_reason: stopReason(a), stop_sequence: a.stopSequence ?? null },
      usage: { output_tokens: a.usage.completion_tokens },
    }) +
    event({ type: 'message_stop' });
  const frameBufs = frames.map((f) => Buffer.from(f));
  return {
    frames: frameBufs,
    end: Buffer.from(end),
    full: Buffer.from(frames.join('') + end),
    error: Buffer.from(event({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })),
  };
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The key in `x-api-key`, or (as Anthropic's own SDK sends it since 1.0) `Authorization: Bearer`. */
function apiKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const key = header(headers, 'x-api-key');
  if (key !== undefined && key !== '') return key;
  const auth = header(headers, 'authorization');
  return auth !== undefined && auth.startsWith('Bearer ') && auth.length > 7 ? auth.slice(7) : undefined;
}

function anthropicDialect(apiKey: string | undefined): Dialect {
  return {
    kind: 'anthropic',
    chatPaths: new Set(['/v1/messages']),
    embedPaths: new Set(),
    probePaths: new Set(['/v1/models']),
    streamContentType: 'text/event-stream; charset=utf-8',

    wantsStream: (body) => isObject(body) && body.stream === true,
    // Anthropic reports usage in every answer and stream.
    wantsUsage: () => true,

    renderJson: (a, model) =>
      json({
        id: nextId('msg'),
        type: 'message',
        role: 'assistant',
        model,
        content: contentBlocks(a),
        stop_reason: stopReason(a),
        stop_sequence: a.stopSequence ?? null,
        usage: usage(a, a.usage.completion_tokens),
      }),

    renderStream,

    // Anthropic has no embeddings API: embedPaths is empty, so this never answers.
    renderEmbeddings: () => errorJson(404, 'embeddings are not served'),

    emptyStream: () => Buffer.from(renderStream({ content: '', parts: [], toolCalls: [], usage: { prompt_tokens: 10, completion_tokens: 0 }, finishReason: undefined, refusal: undefined, stopSequence: undefined, thinking: undefined }, 'fake').full),
    malformedJson: () => Buffer.from('{"id":"msg_fake","type":"message","role":"assistant","content":[{'),
    // message_stop follows so the fault is "unparseable data", not also "cut short".
    malformedStream: () => Buffer.from(`event: message_start\ndata: {not json\n\n${event({ type: 'message_stop' })}`),
    // A ping carries nothing: an endless run of them never delivers a delta.
    roleOnlyChunk: () => Buffer.from(event({ type: 'ping' })),
    endlessLineStart: () => Buffer.from('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"'),
    errorBody: (status, model) => errorJson(status, errorMessage(status, model)),
    modelsBody: (models) =>
      json({
        data: models.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z' })),
        has_more: false,
        first_id: models[0] ?? null,
        last_id: models.at(-1) ?? null,
      }),

    refuse(headers, body, probe) {
      const key = apiKeyOf(headers);
      if (key === undefined) return { status: 401, body: errorJson(401, 'x-api-key header is required') };
      if (apiKey !== undefined && key !== apiKey) return { status: 401, body: errorJson(401, 'invalid x-api-key') };
      const version = header(headers, 'anthropic-version');
      if (version === undefined) return { status: 400, body: errorJson(400, 'anthropic-version: header is required') };
      if (version !== VERSION) return { status: 400, body: errorJson(400, `anthropic-version: invalid version ${version.slice(0, 40)}`) };
      if (probe) return undefined;
      if (!isObject(body)) return { status: 400, body: errorJson(400, 'The request body is not valid JSON.') };
      if (!Array.isArray(body.messages)) return { status: 400, body: errorJson(400, 'messages: Field required') };
      if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1) {
        return { status: 400, body: errorJson(400, 'max_tokens: Field required') };
      }
      const ids = toolIdProblem(body.messages);
      return ids === undefined ? undefined : { status: 400, body: errorJson(400, ids) };
    },
  };
}

/** Anthropic's pattern for a tool_use id (and a tool_result's tool_use_id). */
const TOOL_ID = /^[a-zA-Z0-9_-]+$/;

/** As Anthropic refuses them: a tool id outside its pattern, or two tool_use blocks with one id. */
function toolIdProblem(messages: unknown[]): string | undefined {
  const seen = new Set<string>();
  for (const [m, message] of messages.entries()) {
    const content = isObject(message) ? message.content : undefined;
    if (!Array.isArray(content)) continue;
    for (const [c, block] of content.entries()) {
      if (!isObject(block)) continue;
      const field = block.type === 'tool_use' ? 'id' : block.type === 'tool_result' ? 'tool_use_id' : undefined;
      if (field === undefined) continue;
      const id = block[field];
      if (typeof id !== 'string' || !TOOL_ID.test(id)) return `messages.${m}.content.${c}.${block.type}.${field}: String should match pattern '^[a-zA-Z0-9_-]+$'`;
      if (block.type !== 'tool_use') continue;
      if (seen.has(id)) return `messages.${m}.content.${c}: \`tool_use\` ids must be unique`;
      seen.add(id);
    }
  }
  return undefined;
}

/**
 * An Anthropic Messages upstream: POST /v1/messages (JSON or SSE), GET /v1/models.
 * Requests without `x-api-key` (or with another key than `apiKey`) get 401, without
 * `anthropic-version` or `max_tokens` 400, with a tool id outside Anthropic's pattern
 * or a repeated tool_use id 400, as Anthropic answers them.
 */
export function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeUpstream> {
  return startFakeUpstream(anthropicDialect(options.apiKey), options);
}
