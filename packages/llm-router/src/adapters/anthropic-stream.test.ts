import { describe, expect, it } from 'vitest';
import type { StreamEvent } from './adapter.js';
import { AnthropicStreamDecoder } from './anthropic-stream.js';

/** An SSE event as Anthropic frames it: the event name, and the same name as the data's `type`. */
const sse = (data: Record<string, unknown>): string => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;

const START = sse({
  type: 'message_start',
  message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: [], stop_reason: null, usage: { input_tokens: 30, cache_read_input_tokens: 10, output_tokens: 1 } },
});
const TEXT_START = sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
const text = (t: string, index = 0) => sse({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: t } });
const STOP = sse({ type: 'message_stop' });

/** Feeds `body` one byte at a time (the worst split a socket can deliver), then ends. */
function decodeByteByByte(body: string, hideUsage = true, native = false): StreamEvent[] {
  const decoder = new AnthropicStreamDecoder(undefined, hideUsage, native);
  const bytes = new TextEncoder().encode(body);
  const out: StreamEvent[] = [];
  for (const byte of bytes) out.push(...decoder.push(Uint8Array.of(byte)));
  out.push(...decoder.end());
  return out;
}

/** The chunks' JSON, as far as these tests read it. */
interface Chunk {
  choices: Array<{ index: number; delta: { content?: string }; logprobs: null; finish_reason: string | null }>;
}
const chunksOf = (events: StreamEvent[]): Chunk[] => events.flatMap((e) => (e.type === 'chunk' ? [JSON.parse(e.data) as Chunk] : []));

describe('AnthropicStreamDecoder', () => {
  it('decodes a stream split at every byte (multi-byte text included) and marks only content as deltas', () => {
    const body = START + TEXT_START + sse({ type: 'ping' }) + text('Grüß ') + text('dich 👋') + sse({ type: 'content_block_stop', index: 0 }) +
      sse({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } }) + STOP;
    const events = decodeByteByByte(body);
    expect(events.map((e) => (e.type === 'chunk' ? `chunk:${e.delta}${e.hidden === true ? ':hidden' : ''}` : e.type))).toEqual([
      'chunk:false', // role
      'chunk:true',
      'chunk:true',
      'chunk:false', // finish
      'chunk:false:hidden', // usage, not asked for by the client
      'done',
    ]);
    const chunks = chunksOf(events);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Grüß dich 👋');
    expect(chunks[3]!.choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' });
    expect(events[4]).toMatchObject({ usage: { prompt_tokens: 40, completion_tokens: 5, total_tokens: 45, cached_tokens: 10 } });
  });

  it('takes the cumulative usage newer answers repeat in message_delta', () => {
    const body = START + TEXT_START + text('hi') +
      sse({ type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { input_tokens: 31, cache_read_input_tokens: 12, cache_creation_input_tokens: 3, output_tokens: 8 } }) + STOP;
    const events = decodeByteByByte(body, false);
    const usage = events.find((e) => e.type === 'chunk' && e.usage !== undefined);
    expect(usage).toMatchObject({ usage: { prompt_tokens: 46, completion_tokens: 8, cached_tokens: 12 } });
    // The client asked for usage (hideUsage false): this chunk is relayed.
    expect((usage as { hidden?: boolean }).hidden).toBeUndefined();
    expect(chunksOf(events).find((c) => c.choices.length > 0 && c.choices[0]!.finish_reason !== null)!.choices[0]!.finish_reason).toBe('length');
  });

  it('a refusal stop reason is a content_filter finish (the alias may fail over on it)', () => {
    const events = decodeByteByByte(START + sse({ type: 'message_delta', delta: { stop_reason: 'refusal' }, usage: { output_tokens: 0 } }) + STOP);
    expect(events.find((e) => e.type === 'chunk' && e.finish === true)).toMatchObject({ filtered: true, delta: false });
  });

  it('an error event is the stream error, with its message', () => {
    const events = decodeByteByByte(START + TEXT_START + text('a') + sse({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
    expect(events.at(-1)).toEqual({ type: 'error', message: 'Overloaded' });
  });

  it('without message_stop there is no clean end, even after message_delta', () => {
    const events = decodeByteByByte(START + TEXT_START + text('a') + sse({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } }));
    expect(events.some((e) => e.type === 'done')).toBe(false);
  });

  it('ignores event types it does not know (Anthropic may add some) and blocks it cannot relay', () => {
    const body = START + sse({ type: 'future_event', x: 1 }) +
      sse({ type: 'content_block_start', index: 0, content_block: { type: 'redacted_thinking', data: 'xyz' } }) +
      sse({ type: 'content_block_stop', index: 0 }) + sse({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }) + text('ok', 1) + STOP;
    const contents = chunksOf(decodeByteByByte(body)).map((c) => c.choices[0]?.delta?.content ?? '');
    expect(contents.join('')).toBe('ok');
  });

  it.each([
    ['a delta for a block that never started', START + text('lost', 3)],
    ['a second message_start', START + START],
    ['a block event without an index', START + sse({ type: 'content_block_start', content_block: { type: 'text', text: '' } })],
  ])('%s is malformed data (invalid_response), never guessed at', (_what, body) => {
    expect(() => decodeByteByByte(body)).toThrow(expect.objectContaining({ code: 'invalid_response' }));
  });
});

describe('AnthropicStreamDecoder, an event that is not JSON', () => {
  it('is skipped and counted; the text around it comes through', () => {
    const decoder = new AnthropicStreamDecoder();
    const body = START + TEXT_START + text('one ') + 'event: content_block_delta\ndata: {oops\n\n' + text('two') + STOP;
    const events = decoder.push(new TextEncoder().encode(body));
    expect(chunksOf(events).map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('one two');
    expect(decoder.skippedEvents).toBe(1);
  });
});

describe('AnthropicStreamDecoder, native (a Messages client)', () => {
  const THINKING_START = sse({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } });
  const TOOL_START = sse({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'weather', input: {} } });
  const DELTA = sse({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 7 } });

  it("relays each of Anthropic's events as it came, message_stop too, flagged as the translation would be", () => {
    const ordered = [
      START,
      THINKING_START,
      sse({ type: 'ping' }),
      sse({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hm' } }),
      sse({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } }),
      sse({ type: 'content_block_stop', index: 0 }),
      TOOL_START,
      sse({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":"Oslo"}' } }),
      sse({ type: 'content_block_stop', index: 1 }),
      DELTA,
      STOP,
    ];
    const events = decodeByteByByte(ordered.join(''), true, true);
    expect(events.at(-1)).toEqual({ type: 'done' });
    const chunks = events.slice(0, -1);
    // The data of each SSE event, byte for byte.
    expect(chunks.map((e) => (e.type === 'chunk' ? e.data : e.type))).toEqual(ordered.map((f) => f.slice(f.indexOf('data: ') + 6, -2)));
    expect(chunks.map((e) => e.type === 'chunk' && e.delta)).toEqual([false, false, false, true, false, false, true, true, false, false, false]);
    const finish = chunks[9]!;
    expect(finish).toMatchObject({ finish: true, usage: { prompt_tokens: 40, completion_tokens: 7, total_tokens: 47, cached_tokens: 10 } });
    expect(finish).not.toHaveProperty('hidden');
  });

  it('an error event is still the stream error, not an event to relay', () => {
    const events = decodeByteByByte(START + TEXT_START + text('a') + sse({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }), true, true);
    expect(events.at(-1)).toEqual({ type: 'error', message: 'Overloaded' });
  });
});
