import { describe, expect, it } from 'vitest';
import type { StreamOpen } from '../adapters/adapter.js';
import { OpenAIStreamDecoder } from '../adapters/openai-stream.js';
import { readUntilCommit, type StreamEnd } from './stream-commit.js';

const encoder = new TextEncoder();

/** A stream whose body yields the given SSE texts, one chunk each. */
function openWith(texts: string[]): StreamOpen & { destroyed: boolean } {
  let i = 0;
  const body = {
    destroyed: false,
    [Symbol.asyncIterator]() {
      return this;
    },
    async next(): Promise<IteratorResult<Uint8Array>> {
      return i < texts.length ? { done: false, value: encoder.encode(texts[i++]!) } : { done: true, value: undefined };
    },
    destroy() {
      body.destroyed = true;
    },
  };
  return {
    ok: true,
    status: 200,
    headers: {},
    body,
    decoder: new OpenAIStreamDecoder(),
    get destroyed() {
      return body.destroyed;
    },
  };
}

const delta = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;

describe('a committed stream', () => {
  it('a malformed chunk after the commit ends it with stream_interrupted, never relayed as a chunk', async () => {
    const open = openWith([delta('Hello'), 'data: {"choices":[{"delta":{"content":" wor\n\n', 'data: [DONE]\n\n']);
    const ends: StreamEnd[] = [];
    const pre = await readUntilCommit(open, 't/m', undefined, (end) => ends.push(end));
    if (pre.kind !== 'committed') throw new Error('expected a commit');
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const chunk of pre.stream) seen.push(chunk);
      })(),
    ).rejects.toMatchObject({ code: 'stream_interrupted' });
    expect(seen).toHaveLength(1);
    expect(ends).toEqual([{ kind: 'interrupted', reason: 'invalid_response' }]);
    expect(open.destroyed).toBe(true);
  });
});
