import { describe, expect, it } from 'vitest';
import type { StreamOpen } from '../adapters/adapter.js';
import { OpenAIStreamDecoder } from '../adapters/openai-stream.js';
import { readUntilCommit, type StreamEnd } from './stream-commit.js';

const encoder = new TextEncoder();

/** A stream whose body yields the given SSE texts, one chunk each. */
function openWith(texts: string[]): { -readonly [K in keyof StreamOpen]: StreamOpen[K] } & { destroyed: boolean } {
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
  it('a malformed chunk after the commit is skipped, never relayed as a chunk; the stream goes on to its end', async () => {
    const open = openWith([delta('Hello'), 'data: {"choices":[{"delta":{"content":" wor\n\n', delta(' world'), 'data: [DONE]\n\n']);
    const ends: StreamEnd[] = [];
    const pre = await readUntilCommit(open, 't/m', undefined, new Set(), (end) => ends.push(end), 1024 * 1024);
    if (pre.kind !== 'committed') throw new Error('expected a commit');
    const seen: string[] = [];
    for await (const chunk of pre.stream) seen.push(chunk);
    expect(seen).toHaveLength(2);
    expect(ends).toEqual([{ kind: 'complete' }]);
    expect(open.decoder.skippedEvents).toBe(1);
  });

  it('a stream whose only events cannot be parsed fails before the commit as invalid_response', async () => {
    const open = openWith(['data: {not json\n\n', 'data: [DONE]\n\n']);
    const pre = await readUntilCommit(open, 't/m', undefined, new Set(), () => undefined, 1024 * 1024);
    expect(pre).toMatchObject({ kind: 'failed', failure: { kind: 'error' } });
  });

  it('an event over max_stream_event_bytes after the commit ends it with stream_interrupted (response_too_large)', async () => {
    const open = openWith([delta('Hello'), 'data: ' + 'x'.repeat(5_000), 'x'.repeat(5_000)]);
    open.decoder = new OpenAIStreamDecoder(8_000);
    const ends: StreamEnd[] = [];
    const pre = await readUntilCommit(open, 't/m', undefined, new Set(), (end) => ends.push(end), 1024 * 1024);
    if (pre.kind !== 'committed') throw new Error('expected a commit');
    await expect(
      (async () => {
        for await (const chunk of pre.stream) void chunk;
      })(),
    ).rejects.toMatchObject({ code: 'stream_interrupted' });
    expect(ends).toEqual([{ kind: 'interrupted', reason: 'response_too_large' }]);
  });
});

describe('before the commit', () => {
  it('role-only chunks without end are held only up to max_pre_commit_bytes, then the attempt fails (response_too_large)', async () => {
    const role = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant' } }] })}\n\n`;
    let sent = 0;
    const open = openWith([]);
    // An endless upstream: a role-only chunk per read, forever.
    open.body[Symbol.asyncIterator] = () => ({
      next: async () => {
        sent++;
        return { done: false, value: encoder.encode(role.repeat(10)) };
      },
    });
    const pre = await readUntilCommit(open, 't/m', undefined, new Set(), () => undefined, 64 * 1024);
    expect(pre.kind).toBe('failed');
    if (pre.kind !== 'failed' || pre.failure.kind !== 'error') throw new Error('expected an error failure');
    expect(pre.failure.error).toMatchObject({
      code: 'response_too_large',
      message: 'the stream before its first content delta exceeds max_pre_commit_bytes (65536 bytes)',
    });
    expect(open.destroyed).toBe(true);
    expect(sent).toBeLessThan(64 * 1024 / 256 / 10 + 2);
  });
});
