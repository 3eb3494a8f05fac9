import { describe, expect, it } from 'vitest';
import type { StreamEvent } from './adapter.js';
import { OllamaStreamDecoder, toOpenAICompletion } from './ollama-response.js';

const enc = (s: string) => new TextEncoder().encode(s);
const line = (v: unknown) => JSON.stringify(v) + '\n';
interface Chunk {
  id: string;
  choices: { index: number; delta: { role?: string; content?: string; tool_calls?: Record<string, unknown>[] }; finish_reason: string | null }[];
  usage?: unknown;
}
const chunkOf = (e: StreamEvent) => (e.type === 'chunk' ? (JSON.parse(e.data) as Chunk) : undefined);

describe('toOpenAICompletion', () => {
  it('maps message, tool calls, finish reason and usage as OpenAI answers: null content beside tool calls, no index on them, null refusal and logprobs', () => {
    const out = toOpenAICompletion({
      model: 'qwen',
      created_at: '2026-01-01T00:00:00Z',
      message: { role: 'assistant', content: '', tool_calls: [{ function: { name: 'f', arguments: { a: 1 } } }] },
      done: true,
      done_reason: 'stop',
      prompt_eval_count: 12,
      eval_count: 5,
    });
    expect(out).toMatchObject({
      object: 'chat.completion',
      created: 1767225600,
      model: 'qwen',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          logprobs: null,
          message: { role: 'assistant', content: null, refusal: null },
        },
      ],
      usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
    });
    const [choice] = out.choices as { message: { tool_calls: unknown[] } }[];
    expect(choice?.message.tool_calls).toEqual([{ id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'f', arguments: '{"a":1}' } }]);
    expect(String(out.id)).toMatch(/^chatcmpl-/);
  });
});

describe('OllamaStreamDecoder', () => {
  it('emits a role chunk, content deltas, a finish chunk with usage, then done', () => {
    const d = new OllamaStreamDecoder();
    const events = [
      ...d.push(enc(line({ model: 'm', created_at: '2026-01-01T00:00:00Z', message: { role: 'assistant', content: 'He' }, done: false }))),
      ...d.push(enc(line({ model: 'm', message: { role: 'assistant', content: 'llo' }, done: false }).slice(0, 10))),
      ...d.push(enc(line({ model: 'm', message: { role: 'assistant', content: 'llo' }, done: false }).slice(10))),
      ...d.push(enc(line({ model: 'm', message: { role: 'assistant', content: '' }, done: true, done_reason: 'length', prompt_eval_count: 4, eval_count: 2 }))),
      ...d.end(),
    ];
    expect(events.map((e) => (e.type === 'chunk' ? e.delta : e.type))).toEqual([true, true, false, 'done']);
    expect(chunkOf(events[0]!)?.choices[0]?.delta).toEqual({ role: 'assistant', content: 'He' });
    expect(chunkOf(events[1]!)?.choices[0]?.delta).toEqual({ content: 'llo' });
    const last = chunkOf(events[2]!);
    expect(last?.choices[0]).toEqual({ index: 0, delta: {}, finish_reason: 'length' });
    expect(last?.usage).toEqual({ prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 });
    expect(new Set(events.flatMap((e) => (e.type === 'chunk' ? [chunkOf(e)?.id] : []))).size).toBe(1);
  });

  it('numbers tool calls across chunks and reports an error line as an error event', () => {
    const d = new OllamaStreamDecoder();
    const events = d.push(
      enc(
        line({ model: 'm', message: { role: 'assistant', content: '', tool_calls: [{ function: { name: 'a', arguments: {} } }] }, done: false }) +
          line({ model: 'm', message: { role: 'assistant', content: '', tool_calls: [{ function: { name: 'b', arguments: { x: 1 } } }] }, done: false }) +
          line({ error: 'out of memory' }),
      ),
    );
    expect(chunkOf(events[0]!)?.choices[0]?.delta.tool_calls?.[0]).toMatchObject({ index: 0, function: { name: 'a', arguments: '{}' } });
    expect(chunkOf(events[1]!)?.choices[0]?.delta.tool_calls?.[0]).toMatchObject({ index: 1, function: { name: 'b', arguments: '{"x":1}' } });
    expect(events[2]).toEqual({ type: 'error', message: 'out of memory' });
  });

  it('skips and counts a line that is not JSON', () => {
    const decoder = new OllamaStreamDecoder();
    expect(decoder.push(enc('{not json\n'))).toEqual([]);
    expect(decoder.skippedEvents).toBe(1);
  });
});
