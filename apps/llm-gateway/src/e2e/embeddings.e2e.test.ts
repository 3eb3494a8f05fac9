/**
 * End to end for POST /v1/embeddings: the built gateway process, testkit
 * upstreams (OpenAI-compatible and Ollama-native), and the clients users
 * actually write — the official `openai` SDK, the Vercel AI SDK (`embed`,
 * `embedMany`) and LangChain's `OpenAIEmbeddings` — plus plain HTTP for the
 * error paths.
 */
import { request as httpRequest } from 'node:http';
import { createOpenAI } from '@ai-sdk/openai';
import { OpenAIEmbeddings } from '@langchain/openai';
import { MANA_LLM } from '@mana/llm-aliases';
import { closeFakes, refusingPort, startFakes, type Fakes } from '@mana/llm-testkit';
import { embed, embedMany } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnGateway, type GatewayProcess, type Json } from './harness.js';

const SECRET = 'sk-e2e-EMBED-SECRET-41c9';
const SPACE = 'nomic-embed-text-v1.5';
const DIMS = 12;

let fakes: Fakes<'cloud' | 'node'>;
let gw: GatewayProcess;
let client: OpenAI;

/** An embedding alias in the shared space with `chain`; extra keys (e.g. max_batch) as YAML lines. */
const embeddingAlias = (name: string, chain: string, extra = '') =>
  `  ${name}:\n    kind: embedding\n    embedding_space: ${SPACE}\n${extra}    chain: ${chain}\n`;

beforeAll(async () => {
  fakes = await startFakes({ cloud: 'openai', node: 'ollama' });
  fakes.cloud.on('nomic-ai/nomic-embed-text-v1.5', { kind: 'answer', embedding: { dimensions: DIMS } });
  fakes.cloud.on('short', { kind: 'answer', embedding: { count: 1 } });
  fakes.node.on('nomic-embed-text:v1.5', { kind: 'answer', embedding: { dimensions: DIMS, promptTokens: 9 } });
  fakes.node.on('mixed', { kind: 'answer', embedding: { mixedDimensions: true } });
  const dead = await refusingPort();
  const chat = (name: string) => `  ${name}: [cloud/chat-model]\n`;
  const config =
    `settings:\n  probe_interval: 60s\n  first_byte_timeout: 20s\n` +
    `providers:\n` +
    `  down: { type: ollama, base_url: "http://127.0.0.1:${dead}" }\n` +
    `  node: { type: ollama, base_url: "${fakes.node.url}" }\n` +
    `  cloud: { type: openai, base_url: "${fakes.cloud.baseUrl}", api_key: "${SECRET}" }\n` +
    `aliases:\n` +
    ['mana/fast-text', 'mana/long-form', 'mana/structured', 'mana/reasoning', 'mana/vision'].map(chat).join('') +
    embeddingAlias('mana/embed', '[down/nomic-embed-text:v1.5, cloud/nomic-ai/nomic-embed-text-v1.5]') +
    embeddingAlias('mana/embed-local', '[node/nomic-embed-text:v1.5]') +
    embeddingAlias('mana/embed-short', '[cloud/short, node/nomic-embed-text:v1.5]') +
    embeddingAlias('mana/embed-mixed', '[node/mixed]') +
    embeddingAlias('mana/embed-small-batch', '[cloud/nomic-ai/nomic-embed-text-v1.5]', '    max_batch: 4\n');
  // Default --max-body (20 MB), as a user starts it.
  gw = await spawnGateway({ config });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'auth-off', maxRetries: 0 });
});

afterAll(async () => {
  await gw?.stop();
  await closeFakes(fakes);
});

/** What the cloud fake answers for `input` when asked directly: the vectors the gateway must relay unchanged. */
async function directVectors(input: string[]): Promise<number[][]> {
  const res = await fetch(`${fakes.cloud.baseUrl}/embeddings`, { method: 'POST', body: JSON.stringify({ model: 'nomic-ai/nomic-embed-text-v1.5', input }) });
  const body = (await res.json()) as { data: { embedding: number[] }[] };
  return body.data.map((d) => d.embedding);
}

async function post(path: string, body: unknown): Promise<{ status: number; json: Json; headers: Headers }> {
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json(), headers: res.headers };
}

describe('embeddings with the official openai SDK', () => {
  it('fails over past a dead first target, same space, base64 decoded by the SDK to the upstream floats', async () => {
    const input = ['search_document: red fox', 'search_document: blue whale'];
    const { data, response } = await client.embeddings.create({ model: MANA_LLM.EMBED, input }).withResponse();
    expect(response.status).toBe(200);
    expect(response.headers.get('x-mana-llm-resolved')).toBe('cloud/nomic-ai/nomic-embed-text-v1.5');
    expect(response.headers.get('x-mana-llm-alias')).toBe('mana/embed');
    expect(response.headers.get('x-mana-llm-attempts')).toBe('2');
    expect(response.headers.get('x-mana-llm-embedding-space')).toBe(SPACE);
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    // The SDK asked for base64 (its default) and decoded it: exactly the upstream's float32 values.
    const upstream = fakes.cloud.requests.find((r) => r.operation === 'embed' && r.headers.authorization === `Bearer ${SECRET}`);
    expect(upstream?.body).toMatchObject({ model: 'nomic-ai/nomic-embed-text-v1.5', input, encoding_format: 'base64' });
    expect(data.data.map((d) => d.embedding)).toEqual(await directVectors(input));
    expect(data.usage).toEqual({ prompt_tokens: expect.any(Number), total_tokens: expect.any(Number) });
  });

  it('Ollama /api/embed behind an alias: float output, dimensions passed on, usage from its token count', async () => {
    const result = await client.embeddings.create({ model: 'mana/embed-local', input: 'one text', encoding_format: 'float', dimensions: DIMS });
    expect(result.data).toHaveLength(1);
    expect(result.data[0]!.embedding).toHaveLength(DIMS);
    expect(result.usage).toEqual({ prompt_tokens: 9, total_tokens: 9 });
    const native = fakes.node.requests.at(-1);
    expect(native).toMatchObject({ path: '/api/embed', body: { model: 'nomic-embed-text:v1.5', input: 'one text', dimensions: DIMS } });
    const line = await gw.waitForLog((l) => l.msg === 'request' && l.alias === 'mana/embed-local');
    expect(line).toMatchObject({ path: '/v1/embeddings', status: 200, target: 'node/nomic-embed-text:v1.5' });
  });

  it('a chat alias on /v1/embeddings and an embedding alias on /v1/chat/completions answer 400 alias_kind_mismatch', async () => {
    await expect(client.embeddings.create({ model: 'mana/fast-text', input: 'x' })).rejects.toMatchObject({ status: 400, code: 'alias_kind_mismatch' });
    await expect(client.chat.completions.create({ model: 'mana/embed', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      status: 400,
      code: 'alias_kind_mismatch',
    });
    const raw = await post('/v1/embeddings', { model: 'mana/fast-text', input: 'x' });
    expect(raw.json.error.message).toContain('mana/fast-text is a chat alias: use it on /v1/chat/completions');
    expect(raw.json.error.param).toBe('model');
  });
});

describe('embeddings with the Vercel AI SDK and LangChain', () => {
  it('AI SDK: embed and embedMany', async () => {
    const provider = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'auth-off' });
    const model = provider.embedding(MANA_LLM.EMBED);
    const one = await embed({ model, value: 'search_query: fox', maxRetries: 0 });
    expect(one.embedding).toEqual((await directVectors(['search_query: fox']))[0]);
    const many = await embedMany({ model, values: ['a', 'b', 'c'], maxRetries: 0 });
    expect(many.embeddings).toEqual(await directVectors(['a', 'b', 'c']));
    expect(many.usage.tokens).toBeGreaterThan(0);
  });

  it("LangChain: OpenAIEmbeddings' embedQuery and embedDocuments", async () => {
    const embeddings = new OpenAIEmbeddings({ model: MANA_LLM.EMBED, apiKey: 'auth-off', configuration: { baseURL: `${gw.url}/v1` }, maxRetries: 0 });
    expect(await embeddings.embedQuery('what is a fox')).toEqual((await directVectors(['what is a fox']))[0]);
    const docs = await embeddings.embedDocuments(['doc one', 'doc two']);
    expect(docs).toEqual(await directVectors(['doc one', 'doc two']));
  });
});

describe('embeddings: bad input and bad answers', () => {
  it.each([
    ['empty input array', { model: 'mana/embed', input: [] }, 'empty_input', 'input'],
    ['empty string', { model: 'mana/embed', input: '' }, 'empty_input', 'input'],
    ['an empty string inside', { model: 'mana/embed', input: ['a', ''] }, 'empty_input', 'input[1]'],
    ['a non-string item', { model: 'mana/embed', input: ['a', 42] }, 'invalid_type', 'input[1]'],
    ['an object item', { model: 'mana/embed', input: [{ text: 'a' }] }, 'invalid_type', 'input[0]'],
    ['missing input', { model: 'mana/embed' }, 'empty_input', 'input'],
    ['unknown encoding_format', { model: 'mana/embed', input: 'a', encoding_format: 'int8' }, 'invalid_request', 'encoding_format'],
    ['dimensions not a whole number', { model: 'mana/embed', input: 'a', dimensions: 1.5 }, 'invalid_type', 'dimensions'],
  ])('%s → 400 %s', async (_name, body, code, param) => {
    const res = await post('/v1/embeddings', body);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code, param, type: 'invalid_request_error' });
  });

  it('a 50 MB body → 413 request_too_large (default 20 MB limit), never buffered whole', async () => {
    const result = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(`${gw.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      const chunk = Buffer.alloc(1024 * 1024, 0x61); // 1 MB of "a"
      let sent = 0;
      const pump = (): void => {
        if (sent === 0) req.write('{"model":"mana/embed","input":"');
        while (sent < 50 && !req.destroyed) {
          sent++;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end('"}');
      };
      pump();
    });
    expect(result.status).toBe(413);
    expect(JSON.parse(result.text).error.code).toBe('request_too_large');
  });

  it('too few vectors fail over to the next target; mixed dimensions alone are 502 upstream_failed', async () => {
    const ok = await client.embeddings.create({ model: 'mana/embed-short', input: ['a', 'b'] }).withResponse();
    expect(ok.response.headers.get('x-mana-llm-resolved')).toBe('node/nomic-embed-text:v1.5');
    expect(ok.data.data).toHaveLength(2);
    const bad = await post('/v1/embeddings', { model: 'mana/embed-mixed', input: ['a', 'b'] });
    expect(bad.status).toBe(502);
    expect(bad.json.error.code).toBe('upstream_failed');
    expect(bad.json.error.attempts).toMatchObject([{ target: 'node/mixed', reason: 'invalid_embeddings', detail: 'mixed dimensions (8 and 7)' }]);
  });

  it('a batch over the alias max_batch → 400 batch_too_large, nothing sent upstream; /embeddings works without /v1', async () => {
    const before = fakes.cloud.count();
    const res = await post('/v1/embeddings', { model: 'mana/embed-small-batch', input: ['1', '2', '3', '4', '5'] });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: 'batch_too_large', param: 'input' });
    expect(fakes.cloud.count()).toBe(before);
    const fine = await post('/embeddings', { model: 'mana/embed-small-batch', input: ['1', '2', '3', '4'] });
    expect(fine.status).toBe(200);
    expect(fine.json.data).toHaveLength(4);
  });
});

describe('embeddings in the listings and metrics', () => {
  it('/v1/models and /v1/aliases show kind and space', async () => {
    const models = (await (await fetch(`${gw.url}/v1/models`)).json()) as Json;
    expect(models.data.find((m: Json) => m.id === 'mana/embed')).toMatchObject({ kind: 'embedding', embedding_space: SPACE });
    expect(models.data.find((m: Json) => m.id === 'mana/fast-text')).toMatchObject({ kind: 'chat' });
    const aliases = (await (await fetch(`${gw.url}/v1/aliases`)).json()) as Json;
    expect(aliases.data.find((a: Json) => a.alias === 'mana/embed-small-batch')).toMatchObject({ kind: 'embedding', embedding_space: SPACE, max_batch: 4 });
    expect(aliases.data.find((a: Json) => a.alias === 'mana/long-form')).toMatchObject({ kind: 'chat' });
  });

  it('/metrics counts embeddings like chat, and no key leaks', async () => {
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    expect(text).toMatch(/mana_llm_requests_total\{api="embeddings",alias="mana\/embed",target="cloud\/nomic-ai\/nomic-embed-text-v1.5",status="200"\} \d+\n/);
    expect(text).toMatch(/mana_llm_fallback_total\{from_model="down\/nomic-embed-text:v1.5",to_model="cloud\/nomic-ai\/nomic-embed-text-v1.5",reason="connect_refused"\} \d+\n/);
    expect(text).toMatch(/mana_llm_requests_total\{api="embeddings",alias="mana\/embed-mixed",target="none",status="502"\} 1\n/);
    expect(text).not.toContain(SECRET);
    expect(gw.output()).not.toContain(SECRET);
  });
});
