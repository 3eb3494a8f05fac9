/**
 * The stream encoder on chunk sequences the testkit fakes do not send: a
 * call's arguments in several deltas, calls without an `index`, text after a
 * tool call, a refusal, an upstream without usage. What is asserted is what
 * Anthropic's SDK accumulates from the frames (its MessageStream) and the
 * event order itself.
 */
import { describe, expect, it } from 'vitest';
import type { StreamResult, Usage } from '@mana/llm-router';
import type { Json } from '../../e2e/harness.js';
import type { DecodedRequest } from '../codec.js';
import { AnthropicStream } from './message-stream.js';

const REQUEST: DecodedRequest = { ok: true, model: 'mana/fast-text', stream: true, body: { messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 10 } };

function result(usage?: Usage): StreamResult {
  return { kind: 'stream', protocol: 'openai', events: (async function* () {})(), usage, headers: {}, outcome: { alias: 'mana/fast-text', target: 'cloud/m', attempts: [], upstreamCalls: 1, retryAfterSeconds: undefined } };
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
  JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });

/** Runs chunks through one encoder: the frames as `event [index]` and their data. */
function encode(chunks: string[], usage?: Usage) {
  const r = result(usage);
  const encoder = new AnthropicStream(r, REQUEST);
  const text = chunks.map((c) => encoder.event(c)).join('') + encoder.end(r);
  const frames = text
    .trim()
    .split('\n\n')
    .map((f) => {
      const [event, data] = f.split('\n');
      return { event: event!.slice(7), data: JSON.parse(data!.slice(6)) as Json };
    });
  return { frames, order: frames.map((f) => (typeof f.data.index === 'number' ? `${f.event} ${f.data.index}` : f.event)) };
}

describe('AnthropicStream', () => {
  it("a call's arguments over several deltas go to its one block; text after a call opens a new block", () => {
    const { order, frames } = encode([
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
      chunk({ content: 'done' }),
      chunk({}, 'tool_calls'),
    ]);
    expect(order).toEqual([
      'message_start',
      'content_block_start 0',
      'ping',
      'content_block_delta 0',
      'content_block_delta 0',
      'content_block_stop 0',
      'content_block_start 1',
      'content_block_delta 1',
      'content_block_stop 1',
      'message_delta',
      'message_stop',
    ]);
    expect(frames[1]!.data.content_block).toEqual({ type: 'tool_use', id: 'call_a', name: 'f', input: {} });
    expect(frames.filter((f) => f.data.delta?.type === 'input_json_delta').map((f) => f.data.delta.partial_json).join('')).toBe('{"a":1}');
    expect(frames.at(-2)!.data.delta).toEqual({ stop_reason: 'tool_use', stop_sequence: null });
  });

  it('calls without an index: each id starts the next block', () => {
    const { order, frames } = encode([
      chunk({ tool_calls: [{ id: 'x', function: { name: 'f', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ id: 'y', function: { name: 'g', arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    expect(order.filter((o) => o.startsWith('content_block_start'))).toEqual(['content_block_start 0', 'content_block_start 1']);
    expect(frames.filter((f) => f.event === 'content_block_start').map((f) => f.data.content_block.id)).toEqual(['x', 'y']);
  });

  it('a refusal is text with stop_reason refusal', () => {
    const { frames } = encode([chunk({ refusal: 'I cannot.' }), chunk({}, 'stop')]);
    expect(frames[3]!.data.delta).toEqual({ type: 'text_delta', text: 'I cannot.' });
    expect(frames.at(-2)!.data.delta.stop_reason).toBe('refusal');
  });

  it("without the upstream's usage: estimates, never 0; with it: the upstream's figures, cached tokens apart", () => {
    const estimated = encode([chunk({ content: 'Hello there, friend' }), chunk({}, 'stop')]);
    const start = estimated.frames[0]!.data.message.usage;
    expect(start.input_tokens).toBeGreaterThan(0);
    expect(estimated.frames.at(-2)!.data.usage).toEqual({ input_tokens: start.input_tokens, output_tokens: 4 });
    const reported = encode([chunk({ content: 'Hi' }), chunk({}, 'stop')], { prompt_tokens: 50, completion_tokens: 2, total_tokens: 52, cached_tokens: 30 });
    expect(reported.frames.at(-2)!.data.usage).toEqual({ input_tokens: 20, output_tokens: 2, cache_read_input_tokens: 30 });
  });
});
