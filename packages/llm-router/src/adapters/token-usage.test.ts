import { describe, expect, it } from 'vitest';
import { embeddingUsage } from './embeddings.js';
import { OllamaStreamDecoder, toOpenAICompletion } from './ollama-response.js';
import { OpenAIStreamDecoder } from './openai-stream.js';
import { MAX_TOKEN_COUNT, toUsage, tokenCount } from './token-usage.js';

const IMPLAUSIBLE = [-5, -0.5, 2.5, 1e308, MAX_TOKEN_COUNT + 1, Number.NaN, Number.POSITIVE_INFINITY, '12', true, {}];

describe('token counts from upstreams', () => {
  it('believes non-negative integers up to MAX_TOKEN_COUNT, nothing else', () => {
    expect([0, 1, 4096, MAX_TOKEN_COUNT].map(tokenCount)).toEqual([0, 1, 4096, MAX_TOKEN_COUNT]);
    for (const value of IMPLAUSIBLE) expect(tokenCount(value), String(value)).toBeUndefined();
  });

  it('OpenAI usage: one implausible count (prompt, completion, total or cached) makes the whole usage unknown', () => {
    const good = { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15, prompt_tokens_details: { cached_tokens: 4 } };
    expect(toUsage(good)).toEqual({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15, cached_tokens: 4 });
    for (const value of IMPLAUSIBLE) {
      expect(toUsage({ ...good, prompt_tokens: value }), `prompt ${String(value)}`).toBeUndefined();
      expect(toUsage({ ...good, completion_tokens: value }), `completion ${String(value)}`).toBeUndefined();
      expect(toUsage({ ...good, total_tokens: value }), `total ${String(value)}`).toBeUndefined();
      expect(toUsage({ ...good, prompt_tokens_details: { cached_tokens: value } }), `cached ${String(value)}`).toBeUndefined();
    }
    const reasoning = { ...good, completion_tokens_details: { reasoning_tokens: 2 } };
    expect(toUsage(reasoning)).toEqual({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15, cached_tokens: 4, reasoning_tokens: 2 });
    for (const value of IMPLAUSIBLE) {
      expect(toUsage({ ...good, completion_tokens_details: { reasoning_tokens: value } }), `reasoning ${String(value)}`).toBeUndefined();
    }
    // Not reported is not implausible: the total is then the sum, and cached is left out.
    expect(toUsage({ prompt_tokens: 2, completion_tokens: 1, total_tokens: null, prompt_tokens_details: { cached_tokens: null } })).toEqual({
      prompt_tokens: 2,
      completion_tokens: 1,
      total_tokens: 3,
    });
  });

  it('every dialect reads through the same check: stream chunks, Ollama answers and streams, embeddings', () => {
    const chunk = '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":-5,"completion_tokens":1}}';
    const [event] = new OpenAIStreamDecoder().push(new TextEncoder().encode(`data: ${chunk}\n\n`));
    expect(event).toMatchObject({ type: 'chunk', finish: true, usage: undefined });

    const native = { model: 'm', message: { role: 'assistant', content: 'hi' }, done: true, prompt_eval_count: 1e308, eval_count: 2 };
    expect(toOpenAICompletion(native).usage).toBeUndefined();
    const events = new OllamaStreamDecoder().push(new TextEncoder().encode(`${JSON.stringify({ ...native, prompt_eval_count: 2.5 })}\n`));
    expect(events.find((e) => e.type === 'chunk' && e.finish === true)).toMatchObject({ usage: undefined });
    // Ollama leaves out a zero count: still known.
    expect(toOpenAICompletion({ ...native, prompt_eval_count: undefined }).usage).toEqual({ prompt_tokens: 0, completion_tokens: 2, total_tokens: 2 });

    expect(embeddingUsage({ prompt_tokens: -1, total_tokens: -1 })).toBeUndefined();
    expect(embeddingUsage({ prompt_tokens: 7, total_tokens: 7 })).toEqual({ prompt_tokens: 7, completion_tokens: 0, total_tokens: 7 });
  });
});
