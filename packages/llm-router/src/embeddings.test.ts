import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { refusingPort, startFakeOllama, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile, parseConfig } from './config/load-config.js';
import { otherAliases } from './config/test-configs.js';
import { createRouter, type Router } from './router.js';
import { failure } from './test-support.js';
import type { EmbeddingRequestBody, JsonResult, RouterResult } from './types.js';

const SPACE = 'nomic-embed-text-v1.5';
let ollama: FakeUpstream;
let cloud: FakeUpstream;
let deadPort: number;
let router: Router | undefined;

beforeAll(async () => {
  [ollama, cloud] = await Promise.all([startFakeOllama({ name: 'node' }), startFakeOpenAI({ name: 'cloud' })]);
  deadPort = await refusingPort();
});
afterEach(async () => {
  await router?.close();
  router = undefined;
  ollama.reset();
  cloud.reset();
});
afterAll(() => Promise.all([ollama.close(), cloud.close()]));

/** `mana/embed` = `chain` (default: the Ollama node, then the cloud serving the same weights). */
function config(options: { chain?: string; ollamaBase?: string; extra?: string } = {}) {
  return `
settings: { connect_timeout: 1s, first_byte_timeout: 5s }
providers:
  ollama: { type: ollama, base_url: "${options.ollamaBase ?? ollama.baseUrl}" }
  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key: "sk-cloud-secret-1234" }
aliases:
  mana/embed:
    kind: embedding
    embedding_space: ${SPACE}
${options.extra ?? ''}    chain: ${options.chain ?? '[ollama/nomic-embed-text, cloud/nomic-ai/nomic-embed-text-v1.5]'}
${otherAliases('mana/embed')}`;
}

function start(options: Parameters<typeof config>[0] = {}): Router {
  router = createRouter({ config: parseConfig(config(options), { source: 'aliases.yaml', env: {} }) });
  return router;
}

const embed = (r: Router, body: Partial<EmbeddingRequestBody>, model = 'mana/embed'): Promise<RouterResult> =>
  r.execute({ model, operation: 'embedding', body: { input: 'hello', ...body } as EmbeddingRequestBody, stream: false });

type List = { object: string; data: { index: number; embedding: number[] | string }[]; usage: { prompt_tokens: number; total_tokens: number } };
const list = (result: RouterResult): List => {
  expect(result.kind).toBe('json');
  return (result as JsonResult).body as unknown as List;
};

describe('embeddings through an alias', () => {
  it('translates Ollama /api/embed both ways, usage from its token count, and names the space', async () => {
    ollama.on('nomic-embed-text', { kind: 'answer', embedding: { dimensions: 4, promptTokens: 6 } });
    const result = (await embed(start(), { input: ['a', 'b'], dimensions: 4 })) as JsonResult;
    expect(result.outcome.target).toBe('ollama/nomic-embed-text');
    expect(result.embeddingSpace).toBe(SPACE);
    expect(result.usage).toEqual({ prompt_tokens: 6, completion_tokens: 0, total_tokens: 6 });
    const body = list(result);
    expect(body).toMatchObject({ object: 'list', usage: { prompt_tokens: 6, total_tokens: 6 } });
    expect(body.data.map((d) => [d.index, (d.embedding as number[]).length])).toEqual([[0, 4], [1, 4]]);
    expect(ollama.requests[0]).toMatchObject({ path: '/api/embed', body: { model: 'nomic-embed-text', input: ['a', 'b'], dimensions: 4 } });
  });

  it('a dead first target answers from the second, in the same space', async () => {
    const result = (await embed(start({ ollamaBase: `http://127.0.0.1:${deadPort}` }), { input: ['x', 'y', 'z'] })) as JsonResult;
    expect(result.outcome.target).toBe('cloud/nomic-ai/nomic-embed-text-v1.5');
    expect(result.embeddingSpace).toBe(SPACE);
    expect(result.outcome.attempts.map((a) => `${a.target}:${a.outcome}:${a.reason}`)).toEqual([
      'ollama/nomic-embed-text:failed:connect_refused',
      'cloud/nomic-ai/nomic-embed-text-v1.5:ok:ok',
    ]);
    expect(list(result).data).toHaveLength(3);
    expect(cloud.requests[0]).toMatchObject({ path: '/v1/embeddings', body: { model: 'nomic-ai/nomic-embed-text-v1.5', input: ['x', 'y', 'z'] } });
    expect(cloud.requests[0]!.headers.authorization).toBe('Bearer sk-cloud-secret-1234');
  });

  it('base64: Ollama floats are encoded, the same float32 values as the float answer', async () => {
    const r = start();
    const floats = list(await embed(r, { input: 'same text' })).data[0]!.embedding as number[];
    const b64 = list(await embed(r, { input: 'same text', encoding_format: 'base64' })).data[0]!.embedding as string;
    const bytes = Buffer.from(b64, 'base64');
    expect(Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4))).toEqual(floats);
  });

  it('an upstream ignoring encoding_format still answers in the encoding asked for', async () => {
    // The fake OpenAI upstream honours base64; one that sends base64 when floats were asked must be decoded.
    cloud.on('m', { kind: 'answer', embedding: { dimensions: 2 } });
    const r = start({ chain: '[cloud/m]' });
    const b64 = list(await embed(r, { input: 'q', encoding_format: 'base64' })).data[0]!.embedding;
    expect(typeof b64).toBe('string');
    const floats = list(await embed(r, { input: 'q' })).data[0]!.embedding as number[];
    expect(floats).toHaveLength(2);
  });

  it('wrong vector count or mixed dimensions fail over like an invalid answer; alone they are upstream_failed', async () => {
    ollama.on('nomic-embed-text', { kind: 'answer', embedding: { count: 1 } });
    const result = await embed(start(), { input: ['a', 'b'] });
    expect(result.outcome.target).toBe('cloud/nomic-ai/nomic-embed-text-v1.5');
    expect(result.outcome.attempts[0]).toMatchObject({ outcome: 'failed', reason: 'invalid_embeddings', detail: 'expected 2 vectors, got 1', failedOver: true });

    await router?.close();
    ollama.on('nomic-embed-text', { kind: 'answer', embedding: { mixedDimensions: true } });
    const error = await failure(embed(start({ chain: '[ollama/nomic-embed-text]' }), { input: ['a', 'b', 'c'] }));
    expect(error.code).toBe('upstream_failed');
    expect(error.outcome.attempts).toMatchObject([{ reason: 'invalid_embeddings', detail: 'mixed dimensions (8 and 7)' }]);
  });

  it('vectors of other dimensions than asked for are not relayed', async () => {
    cloud.on('m', { kind: 'answer', embedding: { dimensions: 8 } });
    const error = await failure(embed(start({ chain: '[cloud/m]' }), { input: 'a', dimensions: 4 }));
    expect(error.outcome.attempts).toMatchObject([{ reason: 'invalid_embeddings', detail: 'asked for 4 dimensions, got 8' }]);
  });

  it('token arrays skip Ollama (text only) without a call and reach the OpenAI-compatible target', async () => {
    const result = await embed(start(), { input: [[1, 2, 3], [4, 5]] });
    expect(result.outcome.target).toBe('cloud/nomic-ai/nomic-embed-text-v1.5');
    expect(result.outcome.attempts[0]).toMatchObject({ reason: 'unsupported_request' });
    expect(ollama.count()).toBe(0);
    expect(list(result).data).toHaveLength(2);
  });

  it('a chat alias on embeddings and an embedding alias on chat are alias_kind_mismatch (400), no upstream call', async () => {
    const r = start();
    const wrongRoute = await failure(embed(r, {}, 'mana/long-form'));
    expect(wrongRoute).toMatchObject({ code: 'alias_kind_mismatch', knownAliases: ['mana/embed'], aliasKind: 'chat' });
    expect(wrongRoute.message).toContain('mana/long-form is a chat alias, not an embedding one (embedding aliases: mana/embed)');
    const wrongChat = await failure(r.execute({ model: 'mana/embed', body: { messages: [{ role: 'user', content: 'x' }] }, stream: false }));
    expect(wrongChat).toMatchObject({ code: 'alias_kind_mismatch', aliasKind: 'embedding' });
    expect(wrongChat.message).toContain('mana/embed is an embedding alias, not a chat one');
    expect(ollama.count() + cloud.count()).toBe(0);
  });

  it('a direct provider/model works as for chat, with no space declared', async () => {
    const result = (await embed(start(), { input: 'a' }, 'cloud/text-embedding-3-small')) as JsonResult;
    expect(result.outcome.alias).toBeUndefined();
    expect(result.embeddingSpace).toBeUndefined();
    expect(list(result).data).toHaveLength(1);
  });

  it('a batch over the smallest stated max_batch is batch_too_large (400) before any call; at the limit it passes as one call', async () => {
    const r = start({ chain: '[{ target: ollama/nomic-embed-text, max_batch: 3 }, cloud/nomic-ai/nomic-embed-text-v1.5]' });
    const error = await failure(embed(r, { input: ['a', 'b', 'c', 'd'] }));
    expect(error).toMatchObject({ code: 'batch_too_large', outcome: { alias: 'mana/embed', upstreamCalls: 0 } });
    expect(error.message).toContain("4 inputs in one request exceed mana/embed's limit of 3 (max_batch)");
    expect(ollama.count() + cloud.count()).toBe(0);
    expect(list(await embed(r, { input: ['a', 'b', 'c'] })).data).toHaveLength(3);
    expect(ollama.count()).toBe(1);
  });
});

describe('the one-space rule in the config loader', () => {
  const refusal = (text: string): string => {
    try {
      parseConfig(text, { source: 'aliases.yaml', env: {} });
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error('expected the config to be refused');
  };

  it('refuses targets that serve different spaces, naming file, line and alias', () => {
    const text = config({ extra: '', chain: '\n      - ollama/nomic-embed-text\n      - { target: cloud/text-embedding-3-small, embedding_space: openai-3-small }' });
    expect(refusal(text)).toBe(
      'invalid config at aliases.yaml line 12 (alias mana/embed): target cloud/text-embedding-3-small serves embedding_space "openai-3-small", ' +
        `not the alias's embedding_space "${SPACE}": every target of an embedding alias must serve the same vector space, or failover would mix vectors of different models`,
    );
  });

  it('refuses per-target spaces that differ, and a target without a space', () => {
    const base = (chain: string) =>
      `aliases:\n  mana/embed:\n    kind: embedding\n    chain:\n${chain}${otherAliases('mana/embed')}`;
    expect(refusal(base('      - { target: ollama/a, embedding_space: s1 }\n      - { target: groq/b, embedding_space: s2 }\n'))).toContain(
      'line 6 (alias mana/embed): target groq/b serves embedding_space "s2", not "s1" of ollama/a',
    );
    expect(refusal(base('      - { target: ollama/a, embedding_space: s1 }\n      - groq/b\n'))).toContain(
      'line 6 (alias mana/embed): target groq/b of embedding alias mana/embed declares no embedding_space',
    );
  });

  it('refuses embedding keys on a chat alias, and MANA_LLM.EMBED declared as chat', () => {
    expect(refusal(`aliases:\n  mana/fast-text: { embedding_space: s, chain: [ollama/a] }\n${otherAliases('mana/fast-text')}`)).toContain(
      'line 2 (alias mana/fast-text): embedding_space needs kind: embedding',
    );
    expect(refusal(`aliases:\n  mana/embed: [ollama/nomic-embed-text]\n${otherAliases('mana/embed')}`)).toContain(
      '(alias mana/embed): mana/embed (MANA_LLM.EMBED) must be kind: embedding, not chat',
    );
  });

  it('a mixed-space config is refused on reload and the old config keeps serving', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'llm-router-embed-'));
    const path = join(dir, 'aliases.yaml');
    try {
      await writeFile(path, config());
      router = createRouter({ config: await loadConfigFile(path, { env: {} }), configPath: path, env: {} });
      await writeFile(path, config({ chain: '[ollama/nomic-embed-text, { target: cloud/other, embedding_space: other-space }]' }));
      const reload = await router.reload();
      expect(reload.ok).toBe(false);
      if (!reload.ok) expect(reload.error).toContain('(alias mana/embed): target cloud/other serves embedding_space "other-space"');
      const result = (await embed(router, { input: 'still served' })) as JsonResult;
      expect(result.outcome.target).toBe('ollama/nomic-embed-text');
      expect(result.embeddingSpace).toBe(SPACE);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
