/**
 * The JSON encoder: a `chat.completion` → the `response` object, checked
 * against the spec's `Response` schema each time: text, tool calls (the
 * upstream's ids kept as call_id), a refusal, incomplete answers, usage.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { JsonResult, Usage } from '@mana/llm-router';
import { specSchema, specViolations } from '../../e2e/openai-spec.js';
import type { Json } from '../../e2e/harness.js';
import type { DecodedRequest } from '../codec.js';
import { decodeResponsesRequest } from './decode-responses.js';
import { responseJson } from './response-json.js';

function request(body: Json = {}): DecodedRequest {
  const decoded = decodeResponsesRequest({ model: 'mana/fast-text', input: 'hi', ...body });
  if (!decoded.ok) throw new Error(decoded.error.message);
  return decoded;
}

function encode(message: Json, finish = 'stop', usage?: Usage, body?: Json): Json {
  const result: JsonResult = {
    kind: 'json',
    status: 200,
    protocol: 'openai',
    body: { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }] },
    usage,
    headers: {},
    outcome: { alias: 'mana/fast-text', target: 'cloud/m', attempts: [], upstreamCalls: 1, retryAfterSeconds: undefined },
  };
  const response = JSON.parse(responseJson(result, request(body))) as Json;
  expect(specViolations('Response', response)).toEqual([]);
  return response;
}

// Compiling the spec's schemas takes seconds (tens under load): once, before the tests' own clocks start.
beforeAll(() => {
  for (const name of ['Response']) specSchema(name);
}, 180_000);

describe('responseJson', () => {
  it('text: one message item, status completed, the alias as model, usage from the upstream', () => {
    const r = encode({ content: 'Hello' }, 'stop', { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11, cached_tokens: 8 });
    expect(r.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(r).toMatchObject({ object: 'response', status: 'completed', model: 'mana/fast-text', error: null, incomplete_details: null });
    expect(typeof r.created_at).toBe('number');
    expect(typeof r.completed_at).toBe('number');
    expect(r.output).toEqual([
      { id: r.output[0].id, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello', annotations: [], logprobs: [] }] },
    ]);
    expect(r.output[0].id).toMatch(/^msg_/);
    expect(r.usage).toEqual({ input_tokens: 10, input_tokens_details: { cached_tokens: 8, cache_write_tokens: 0 }, output_tokens: 1, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 11 });
    expect(r).not.toHaveProperty('output_text');
    expect(r).not.toHaveProperty('store');
  });

  it("a call to a namespace's function (offered upstream as <namespace>__<name>) is named as the client declared it, with its namespace; other calls keep their name", () => {
    const tools = [{ type: 'function', name: 'run' }, { type: 'namespace', name: 'agents', description: 'Sub-agents.', tools: [{ type: 'function', name: 'spawn' }] }];
    const r = encode(
      {
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'agents__spawn', arguments: '{}' } },
          { id: 'call_2', type: 'function', function: { name: 'run', arguments: '{}' } },
        ],
      },
      'tool_calls',
      undefined,
      { tools },
    );
    expect(r.output).toMatchObject([
      { type: 'function_call', call_id: 'call_1', name: 'spawn', namespace: 'agents' },
      { type: 'function_call', call_id: 'call_2', name: 'run' },
    ]);
    expect(r.output[1]).not.toHaveProperty('namespace');
    expect(r.tools[1]).toMatchObject({ type: 'namespace', name: 'agents' });
  });

  it("tool calls: function_call items with the upstream's call ids, after the text", () => {
    const r = encode(
      {
        content: 'Checking.',
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
          { id: 'call_b', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      'tool_calls',
    );
    expect(r.output.map((i: Json) => i.type)).toEqual(['message', 'function_call', 'function_call']);
    expect(r.output.slice(1)).toEqual([
      { id: r.output[1].id, type: 'function_call', status: 'completed', call_id: 'call_a', name: 'weather', arguments: '{"city":"Oslo"}' },
      { id: r.output[2].id, type: 'function_call', status: 'completed', call_id: 'call_b', name: 'weather', arguments: '{"city":"Rome"}' },
    ]);
    expect(new Set(r.output.map((i: Json) => i.id)).size).toBe(3);
  });

  it('a call the upstream gave no id gets a call_id of its own', () => {
    const r = encode({ content: null, tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] }, 'tool_calls');
    expect(r.output).toHaveLength(1);
    expect(r.output[0].call_id).toMatch(/^call_[0-9a-f]{32}_0$/);
  });

  it('a refusal is a refusal part', () => {
    const r = encode({ content: null, refusal: 'I cannot help with that.' });
    expect(r.output[0].content).toEqual([{ type: 'refusal', refusal: 'I cannot help with that.' }]);
  });

  it.each([
    ['length', 'max_output_tokens'],
    ['content_filter', 'content_filter'],
  ])('finish_reason %s → incomplete, reason %s; no completed_at', (finish, reason) => {
    const r = encode({ content: 'Once upon a' }, finish);
    expect(r).toMatchObject({ status: 'incomplete', incomplete_details: { reason } });
    expect(r.output[0].status).toBe('incomplete');
    expect(r).not.toHaveProperty('completed_at');
  });

  it('an answer with no content has no items', () => {
    expect(encode({ content: '' }).output).toEqual([]);
  });

  it("without the upstream's usage: the gateway's estimates, never 0 for a prompt", () => {
    const r = encode({ content: 'Hello there, friend' });
    expect(r.usage.input_tokens).toBeGreaterThan(0);
    expect(r.usage.output_tokens).toBe(4);
  });

  it("the request's parameters, repeated", () => {
    const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false };
    const r = encode({ content: '{"name":"Oslo"}' }, 'stop', undefined, {
      instructions: 'Only JSON.',
      text: { format: { type: 'json_schema', name: 'city', schema, strict: true } },
      temperature: 0,
      top_p: 1,
      max_output_tokens: 50,
      parallel_tool_calls: false,
      user: 'u-1',
    });
    expect(r).toMatchObject({
      instructions: 'Only JSON.',
      text: { format: { type: 'json_schema', name: 'city', schema, strict: true } },
      temperature: 0,
      top_p: 1,
      max_output_tokens: 50,
      parallel_tool_calls: false,
      tools: [],
      tool_choice: 'auto',
      metadata: {},
      user: 'u-1',
      reasoning: null,
    });
  });
});
