import { describe, expect, it } from 'vitest';
import { OpenAIStreamDecoder } from './openai-stream.js';

const enc = (s: string) => new TextEncoder().encode(s);
const sse = (...data: string[]) => enc(data.map((d) => `data: ${d}\n\n`).join(''));

describe('OpenAIStreamDecoder', () => {
  it('relays the exact chunk text and flags deltas, finish (with its reasons) and usage', () => {
    const role = '{"choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}';
    const text = '{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}';
    const tool = '{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f"}}]}}]}';
    const finish = '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":1}}';
    const events = new OpenAIStreamDecoder().push(sse(role, text, tool, finish, '[DONE]'));
    expect(events).toEqual([
      { type: 'chunk', data: role, delta: false, finish: false, usage: undefined },
      { type: 'chunk', data: text, delta: true, finish: false, usage: undefined },
      { type: 'chunk', data: tool, delta: true, finish: false, usage: undefined },
      { type: 'chunk', data: finish, delta: false, finish: true, finishReasons: ['stop'], usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 } },
      { type: 'done' },
    ]);
  });

  it('reports error events; skips and counts malformed chunks, the stream going on', () => {
    expect(new OpenAIStreamDecoder().push(sse('{"error":{"message":"overloaded"}}'))).toEqual([
      { type: 'error', message: 'overloaded' },
    ]);
    const decoder = new OpenAIStreamDecoder();
    expect(decoder.push(sse('{not json'))).toEqual([]);
    expect(decoder.push(sse('[1,2]'))).toEqual([]);
    expect(decoder.skippedEvents).toBe(2);
    expect(decoder.push(sse('[DONE]'))).toEqual([{ type: 'done' }]);
  });

  it('treats an end after a finish chunk as complete, and an end without one as not', () => {
    const finished = new OpenAIStreamDecoder();
    finished.push(sse('{"choices":[{"delta":{},"finish_reason":"stop"}]}'));
    expect(finished.end()).toEqual([{ type: 'done' }]);
    const cut = new OpenAIStreamDecoder();
    cut.push(sse('{"choices":[{"delta":{"content":"x"}}]}'));
    expect(cut.end()).toEqual([]);
  });
});
