/**
 * Embedding vectors whose values are not finite numbers are never relayed:
 * the built gateway, a fake OpenAI-compatible upstream answering such vectors
 * (`null`, a string, an object, `1e400` in the JSON text, which parses to
 * Infinity, or NaN in base64 float32 bytes), and what a client and an operator see.
 */
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnGateway, type GatewayProcess, type Json } from './harness.js';

const SPACE = 'nomic-embed-text-v1.5';

/** An OpenAI embedding list of one vector, as JSON text: `embedding` is spliced in verbatim. */
const listWith = (embedding: string) =>
  `{"object":"list","data":[{"object":"embedding","index":0,"embedding":${embedding}}],"model":"m","usage":{"prompt_tokens":2,"total_tokens":2}}`;

const NAN_BASE64 = JSON.stringify(Buffer.from(new Float32Array([0.25, Number.NaN, 0.5]).buffer).toString('base64'));

/** Model name at the fake → the vector it answers. */
const BAD_VECTORS = {
  nulls: '[0.25,null,0.5]',
  strings: '[0.25,"0.75",0.5]',
  objects: '[0.25,{"value":0.75},0.5]',
  overflow: '[0.25,1e400,0.5]',
  'nan-base64': NAN_BASE64,
} as const;

let cloud: FakeUpstream;
let gw: GatewayProcess;

const embeddingAlias = (name: string, chain: string) => `  ${name}:\n    kind: embedding\n    embedding_space: ${SPACE}\n    chain: ${chain}\n`;

beforeAll(async () => {
  cloud = await startFakeOpenAI({ name: 'cloud' });
  for (const [model, vector] of Object.entries(BAD_VECTORS)) cloud.on(model, { kind: 'status', status: 200, body: listWith(vector) });
  cloud.on('good', { kind: 'answer', embedding: { dimensions: 3 } });
  const chat = (name: string) => `  ${name}: [cloud/chat-model]\n`;
  const config =
    `settings:\n  probe_interval: 60s\n` +
    `providers:\n` +
    `  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key: "sk-e2e-vectors" }\n` +
    `aliases:\n` +
    ['mana/fast-text', 'mana/long-form', 'mana/structured', 'mana/reasoning', 'mana/vision'].map(chat).join('') +
    embeddingAlias('mana/embed', '[cloud/good]') +
    Object.keys(BAD_VECTORS)
      .map((model) => embeddingAlias(`mana/embed-${model}`, `[cloud/${model}, cloud/good]`) + embeddingAlias(`mana/embed-only-${model}`, `[cloud/${model}]`))
      .join('');
  gw = await spawnGateway({ config });
});

afterAll(async () => {
  await gw?.stop();
  await cloud?.close();
});

async function embed(model: string): Promise<{ status: number; json: Json; headers: Headers }> {
  const res = await fetch(`${gw.url}/v1/embeddings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, input: 'search_document: a fox' }),
  });
  return { status: res.status, json: await res.json(), headers: res.headers };
}

describe('embedding values that are not finite numbers', () => {
  it.each(Object.keys(BAD_VECTORS))('%s: fails over (invalid_embeddings) to the next target, which answers', async (model) => {
    const { status, json, headers } = await embed(`mana/embed-${model}`);
    expect(status).toBe(200);
    expect(headers.get('x-mana-llm-resolved')).toBe('cloud/good');
    expect(headers.get('x-mana-llm-attempts')).toBe('2');
    expect(json.data[0].embedding).toHaveLength(3);
    expect(json.data[0].embedding.every((v: unknown) => typeof v === 'number' && Number.isFinite(v))).toBe(true);
    const line = await gw.waitForLog((l) => l.msg === 'request' && l.req_id === headers.get('x-request-id'));
    expect((line as Json).attempts[0]).toMatchObject({ target: `cloud/${model}`, outcome: 'failed', reason: 'invalid_embeddings' });
  });

  it.each(Object.keys(BAD_VECTORS))('%s with no target left: 502 upstream_failed, OpenAI-shaped, naming invalid_embeddings', async (model) => {
    const { status, json } = await embed(`mana/embed-only-${model}`);
    expect(status).toBe(502);
    expect(json.error).toMatchObject({ code: 'upstream_failed', type: 'api_error' });
    expect(typeof json.error.message).toBe('string');
    expect(json.error.attempts).toMatchObject([
      {
        target: `cloud/${model}`,
        outcome: 'failed',
        reason: 'invalid_embeddings',
        detail: 'vector 0 holds a value that is not a finite number (element 1)',
      },
    ]);
  });
});
