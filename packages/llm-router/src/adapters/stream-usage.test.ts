import { describe, expect, it } from 'vitest';
import { OpenAIStreamDecoder } from './openai-stream.js';
import { withoutNullUsage } from './stream-usage.js';

const sse = (...events: string[]) => new TextEncoder().encode(events.map((e) => `data: ${e}\n\n`).join(''));

describe('usage requested on the client\'s behalf', () => {
  it('hides the usage-only chunk and strips "usage":null from the others, keeping the counts', () => {
    const decoder = new OpenAIStreamDecoder(undefined, true);
    const events = decoder.push(
      sse(
        '{"id":"c1","choices":[{"index":0,"delta":{"content":"hi"}}],"usage":null}',
        '{"id":"c1","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":1,"total_tokens":5}}',
        '[DONE]',
      ),
    );
    expect(events[0]).toMatchObject({ type: 'chunk', data: '{"id":"c1","choices":[{"index":0,"delta":{"content":"hi"}}]}', delta: true });
    expect(events[1]).toMatchObject({ type: 'chunk', hidden: true, usage: { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 } });
    expect(events[2]).toEqual({ type: 'done' });
  });

  it('leaves a stream alone when the client asked for usage itself', () => {
    const decoder = new OpenAIStreamDecoder(undefined, false);
    const usage = '{"id":"c1","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":1}}';
    const [event] = decoder.push(sse(usage));
    expect(event).toMatchObject({ type: 'chunk', data: usage });
    expect(event).not.toHaveProperty('hidden');
  });

  it('removes "usage":null wherever it sits in the object', () => {
    expect(withoutNullUsage('{"usage":null,"id":"x"}')).toBe('{"id":"x"}');
    expect(withoutNullUsage('{"id":"x","usage":null}')).toBe('{"id":"x"}');
    expect(withoutNullUsage('{"id":"x","usage":null,"a":1}')).toBe('{"id":"x","a":1}');
  });
});
