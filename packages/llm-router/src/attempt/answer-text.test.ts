import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFakeOllama, type FakeUpstream } from '@mana/llm-testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load-config.js';
import { otherAliases } from '../config/test-configs.js';
import { createRouter, type Router } from '../router.js';
import type { EmbeddingRequestBody, JsonResult } from '../types.js';

/**
 * A non-stream answer the router takes as it is carries the upstream's own
 * text, so the gateway relays it without serialising the parsed body again;
 * an answer the router built or changed carries none.
 */

let answer = '';
let upstream: Server;
let upstreamUrl: string;
let ollama: FakeUpstream;
let router: Router | undefined;

beforeAll(async () => {
  // Answers every POST with `answer`, byte for byte (the testkit's fakes serialise their own JSON).
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(answer));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  ollama = await startFakeOllama({ host: '127.0.0.1' });
});
afterEach(async () => {
  await router?.close();
  router = undefined;
});
afterAll(async () => {
  await ollama.close();
  await new Promise((resolve) => upstream.close(resolve));
});

function start(): Router {
  const config = parseConfig(
    `settings: { probe_interval: 1h }
providers:
  up: { type: openai, base_url: "${upstreamUrl}", api_key_required: false }
  local: { type: ollama, base_url: "${ollama.baseUrl}" }
aliases:
  mana/fast-text: [up/m]
  mana/long-form: [local/gemma3:4b]
  mana/embed: { kind: embedding, embedding_space: s, chain: [up/e] }
${otherAliases('mana/fast-text').replace(/ {2}mana\/(long-form|embed):.*\n/g, '')}`,
    { env: {} },
  );
  router = createRouter({ config });
  return router;
}

const chat = async (r: Router, model: string): Promise<JsonResult> =>
  (await r.execute({ model, body: { messages: [{ role: 'user', content: 'hi' }] }, stream: false })) as JsonResult;
const embed = async (r: Router, body: Partial<EmbeddingRequestBody>): Promise<JsonResult> =>
  (await r.execute({ model: 'mana/embed', operation: 'embedding', body: { input: 'hi', ...body } as EmbeddingRequestBody, stream: false })) as JsonResult;

describe('the text of a non-stream answer', () => {
  it('an OpenAI-compatible chat answer carries the upstream text as written, which parses to the body', async () => {
    // Whitespace, a 1.0 and a number past 2^53: a re-serialised body would differ from what the upstream said.
    answer = `{\n  "id": "c1", "object": "chat.completion", "seed": 12345678901234567890,\n  "choices": [{"index": 0, "message": {"role": "assistant", "content": "hé"}, "finish_reason": "stop", "logprob": 1.0}],\n  "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}\n}\n`;
    const result = await chat(start(), 'mana/fast-text');
    expect(result.kind).toBe('json');
    expect(result.text).toBe(answer);
    expect(JSON.parse(result.text!)).toEqual(result.body);
    expect(result.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
  });

  it('an Ollama answer is built by the router: no upstream text', async () => {
    const result = await chat(start(), 'mana/long-form');
    expect(result.kind).toBe('json');
    expect(result.body.object).toBe('chat.completion');
    expect(result.text).toBeUndefined();
  });

  it('embeddings in the encoding asked for carry the text; vectors re-encoded for the caller do not', async () => {
    answer = JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.5, 0.25] }], model: 'e', usage: { prompt_tokens: 1, total_tokens: 1 } });
    const r = start();
    const floats = await embed(r, {});
    expect(floats.text).toBe(answer);

    const base64 = await embed(r, { encoding_format: 'base64' });
    expect(base64.text).toBeUndefined();
    const encoded = (base64.body.data as { embedding: string }[])[0]!.embedding;
    const bytes = Buffer.from(encoded, 'base64');
    expect([bytes.readFloatLE(0), bytes.readFloatLE(4)]).toEqual([0.5, 0.25]);
  });
});
