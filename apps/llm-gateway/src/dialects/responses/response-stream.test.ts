/**
 * The Responses stream encoder on chat chunk sequences: event order,
 * `sequence_number`, ids and output indexes that match the final object,
 * text, a refusal, one and several tool calls, an incomplete answer, a stream
 * that fails after its head. Every event is checked against the spec's
 * ResponseStreamEvent, and the openai SDK's own accumulator (what
 * `responses.stream()` builds from the events) must arrive at the output the
 * final event states.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { StreamResult, Usage } from '@mana/llm-router';
import { accumulateResponse } from 'openai/lib/responses/ResponseAccumulator';
import type { Response, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { specSchema, specViolations } from '../../e2e/openai-spec.js';
import { responsesEvents } from '../../e2e/sse-frames.js';
import { gatewayError } from '../../http/errors.js';
import type { Json } from '../../e2e/harness.js';
import type { DecodedRequest } from '../codec.js';
import { decodeResponsesRequest } from './decode-responses.js';
import { ResponsesStream } from './response-stream.js';

function request(body: Json): DecodedRequest {
  const decoded = decodeResponsesRequest({ model: 'mana/fast-text', stream: true, ...body });
  if (!decoded.ok) throw new Error(decoded.error.message);
  return decoded;
}

function result(usage?: Usage): StreamResult {
  return { kind: 'stream', protocol: 'openai', events: (async function* () {})(), usage, headers: {}, outcome: { alias: 'mana/fast-text', target: 'cloud/m', attempts: [], upstreamCalls: 1, retryAfterSeconds: undefined } };
}

const chunk = (delta: Json, finish: string | null = null): string => JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });

/** Runs chunks through one encoder to its end (or failure); checks what holds for every stream. */
function encode(chunks: string[], options: { usage?: Usage; body?: Json; fail?: boolean } = {}) {
  const r = result(options.usage);
  const encoder = new ResponsesStream(r, request({ input: 'hi', ...options.body }));
  const text = chunks.map((c) => encoder.event(c)).join('') + (options.fail ? encoder.failed(gatewayError('stream_interrupted', 'The upstream stream broke.')) : encoder.end(r));
  const events = responsesEvents(text);
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  for (const event of events) expect(specViolations('ResponseStreamEvent', event)).toEqual([]);
  const last = events.at(-1)!;
  expect(specViolations('Response', last.response)).toEqual([]);
  // What the openai SDK builds from the events before the last must be what the last one states.
  let snapshot: Response | undefined;
  for (const event of events.slice(0, -1)) snapshot = accumulateResponse(event as ResponseStreamEvent, snapshot);
  const ids = new Set(events.map((e) => e.response?.id).filter((id) => id !== undefined));
  expect(ids.size).toBe(1);
  return { events, types: events.map((e) => e.type), last: last.response as Json, snapshot: snapshot! };
}

// Compiling the spec's schemas takes seconds (tens under load): once, before the tests' own clocks start.
beforeAll(() => {
  for (const name of ['Response', 'ResponseStreamEvent']) specSchema(name);
}, 180_000);

describe('ResponsesStream', () => {
  it('text: the event order of OpenAI, one item id throughout, the final object with usage', () => {
    const { types, events, last, snapshot } = encode([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hel' }), chunk({ content: 'lo' }), chunk({}, 'stop')], {
      usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11, cached_tokens: 4, reasoning_tokens: 1 },
    });
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events[0]!.response).toMatchObject({ object: 'response', status: 'in_progress', output: [], model: 'mana/fast-text' });
    const item = last.output[0];
    expect(item).toEqual({ id: item.id, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello', annotations: [], logprobs: [] }] });
    expect(item.id).toMatch(/^msg_/);
    expect(events.filter((e) => 'item_id' in e).every((e) => e.item_id === item.id && e.output_index === 0 && e.content_index === 0)).toBe(true);
    expect(events[6]).toMatchObject({ text: 'Hello' });
    expect(last).toMatchObject({ status: 'completed', error: null, incomplete_details: null });
    expect(last.usage).toEqual({ input_tokens: 9, input_tokens_details: { cached_tokens: 4, cache_write_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 1 }, total_tokens: 11 });
    expect(snapshot.output).toEqual(last.output);
  });

  it("parallel tool calls: one function_call item each, closed in turn; call_id is the upstream's id", () => {
    const { types, events, last, snapshot } = encode([
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(last.output.map((i: Json) => [i.type, i.call_id, i.name, i.arguments, i.status])).toEqual([
      ['function_call', 'call_a', 'weather', '{"city":"Oslo"}', 'completed'],
      ['function_call', 'call_b', 'weather', '{"city":"Rome"}', 'completed'],
    ]);
    const [first, second] = last.output as Json[];
    expect(first!.id).not.toBe(second!.id);
    // Every event names its item as the final object does.
    for (const e of events.filter((e) => e.type.startsWith('response.function_call_arguments'))) {
      expect(e.item_id).toBe(last.output[e.output_index].id);
    }
    for (const e of events.filter((e) => e.type.startsWith('response.output_item'))) {
      expect({ id: e.item.id, call_id: e.item.call_id }).toEqual({ id: last.output[e.output_index].id, call_id: last.output[e.output_index].call_id });
    }
    expect(events[5]).toMatchObject({ name: 'weather', arguments: '{"city":"Oslo"}' });
    expect(snapshot.output).toEqual(last.output);
  });

  it('text, then a call without an id from the upstream: two items; the call gets a generated call_id, the same in every event', () => {
    const { last, events, snapshot } = encode([chunk({ content: 'Let me check.' }), chunk({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '{}' } }] }), chunk({}, 'tool_calls')]);
    expect(last.output.map((i: Json) => i.type)).toEqual(['message', 'function_call']);
    const call = last.output[1];
    expect(call.call_id).toMatch(/^call_[0-9a-f]{32}_1$/);
    expect(call.id).toMatch(/^fc_/);
    expect(events.find((e) => e.type === 'response.output_item.added' && e.output_index === 1)!.item.call_id).toBe(call.call_id);
    expect(snapshot.output).toEqual(last.output);
  });

  it('calls without an index: each id starts the next item', () => {
    const { last } = encode([chunk({ tool_calls: [{ id: 'x', function: { name: 'f', arguments: '{}' } }] }), chunk({ tool_calls: [{ id: 'y', function: { name: 'g', arguments: '{}' } }] }), chunk({}, 'tool_calls')]);
    expect(last.output.map((i: Json) => [i.call_id, i.name])).toEqual([
      ['x', 'f'],
      ['y', 'g'],
    ]);
  });

  it('a refusal is a refusal part with refusal events', () => {
    const { types, last, snapshot } = encode([chunk({ refusal: 'I cannot' }), chunk({ refusal: ' help.' }), chunk({}, 'stop')]);
    expect(types.slice(3, 7)).toEqual(['response.content_part.added', 'response.refusal.delta', 'response.refusal.delta', 'response.refusal.done']);
    expect(last.output[0].content).toEqual([{ type: 'refusal', refusal: 'I cannot help.' }]);
    expect(last.status).toBe('completed');
    expect(snapshot.output).toEqual(last.output);
  });

  it.each([
    ['length', 'max_output_tokens'],
    ['content_filter', 'content_filter'],
  ])('finish_reason %s: response.incomplete, reason %s, the cut item incomplete', (finish, reason) => {
    const { types, last } = encode([chunk({ content: 'Once upon' }), chunk({}, finish)], { body: { max_output_tokens: 2 } });
    expect(types.at(-1)).toBe('response.incomplete');
    expect(last).toMatchObject({ status: 'incomplete', incomplete_details: { reason }, max_output_tokens: 2 });
    expect(last.output[0].status).toBe('incomplete');
  });

  it('a failure after the head: response.failed with the output so far, never response.completed', () => {
    const { types, last } = encode([chunk({ content: 'Half an ans' })], { fail: true });
    expect(types.at(-1)).toBe('response.failed');
    expect(types).not.toContain('response.completed');
    expect(types).not.toContain('response.output_item.done');
    expect(last).toMatchObject({ status: 'failed', error: { code: 'server_error' } });
    expect(last.error.message).toContain('stream_interrupted');
    expect(last.output[0]).toMatchObject({ status: 'incomplete', content: [{ type: 'output_text', text: 'Half an ans' }] });
  });

  it('a failure before any event still opens with response.created (the SDK needs it first)', () => {
    const { types } = encode([], { fail: true });
    expect(types).toEqual(['response.created', 'response.in_progress', 'response.failed']);
  });

  it("without the upstream's usage: estimates, never 0 for the prompt", () => {
    const { last } = encode([chunk({ content: 'Hello there, friend' }), chunk({}, 'stop')]);
    expect(last.usage.input_tokens).toBeGreaterThan(0);
    expect(last.usage.output_tokens).toBe(4);
    expect(last.usage.total_tokens).toBe(last.usage.input_tokens + 4);
  });

  it("every response object repeats the request's parameters", () => {
    const tools = [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} }, strict: false }];
    const { events, last } = encode([chunk({ content: 'x' }), chunk({}, 'stop')], {
      body: { instructions: 'Be brief.', tools, tool_choice: 'required', temperature: 0.5, metadata: { k: 'v' }, reasoning: { effort: 'low' } },
    });
    for (const response of [events[0]!.response, events[1]!.response, last]) {
      expect(response).toMatchObject({ instructions: 'Be brief.', tools: [{ ...tools[0], description: null }], tool_choice: 'required', temperature: 0.5, top_p: null, metadata: { k: 'v' }, reasoning: { effort: 'low' } });
    }
  });
});
