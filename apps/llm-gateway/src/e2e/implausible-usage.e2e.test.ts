/**
 * Token counts an upstream reports that cannot be counts (negative, fractional,
 * 1e308), through the built gateway: every dialect (OpenAI-compatible, Ollama
 * native, embeddings of both), streaming or not. The answer still reaches the
 * client; the usage is unknown, so /metrics keeps answering with counters the
 * bad values never touched, and stored records and the summary stay sane.
 * (One `prompt_tokens: -5` used to turn every later scrape into a 500.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeFakes, startFakes, type FakeBehavior, type Fakes } from '@mana/llm-testkit';
import { spawnGateway, type GatewayProcess, type Json } from './harness.js';
import { ADMIN, admin, metric, storedRequest } from './usage-client.js';

const GOOD = { prompt_tokens: 100, completion_tokens: 10 };
const PRICE = '{ input: 1, output: 2 }';
const GOOD_COST = (GOOD.prompt_tokens * 1 + GOOD.completion_tokens * 2) / 1_000_000;

/** Counts no upstream can mean; each bad request takes the next (the last repeats). */
const IMPLAUSIBLE = [
  { prompt_tokens: -5, completion_tokens: 3 },
  { prompt_tokens: 2.5, completion_tokens: 1 },
  { prompt_tokens: 1e308, completion_tokens: 1e308 },
  { prompt_tokens: 4, completion_tokens: -1e308 },
];
const answers = (): FakeBehavior[] => IMPLAUSIBLE.map((usage) => ({ kind: 'answer', content: 'still an answer', chunks: 1, usage }));
const embeddings = (): FakeBehavior[] => [-5, 2.5, 1e308].map((promptTokens) => ({ kind: 'answer', embedding: { promptTokens } }));

const GOOD_ALIAS = 'mana/fast-text';
const CHAT_ALIASES = { 'mana/long-form': 'cloud/bad', 'mana/reasoning': 'node/bad' } as const;
const EMBED_ALIASES = { 'mana/embed': 'cloud/bad-embed', 'mana/embed-local': 'node/bad-embed' } as const;

let fakes: Fakes<'cloud' | 'node'>;
let gw: GatewayProcess;

beforeAll(async () => {
  fakes = await startFakes({ cloud: 'openai', node: 'ollama' });
  fakes.cloud.on('good', { kind: 'answer', content: 'fine', usage: GOOD });
  fakes.cloud.on('bad', answers());
  fakes.node.on('bad', answers());
  fakes.cloud.on('bad-embed', embeddings());
  fakes.node.on('bad-embed', embeddings());
  const embedding = (name: string, target: string) => `  ${name}:\n    kind: embedding\n    embedding_space: s\n    chain: [${target}]\n`;
  const config =
    `settings:\n  probe_interval: 60s\n  failure_threshold: 1000\n` +
    `providers:\n` +
    `  cloud: { type: openai, base_url: "${fakes.cloud.baseUrl}", api_key: "sk-cloud", price: ${PRICE} }\n` +
    `  node: { type: ollama, base_url: "${fakes.node.url}", price: ${PRICE} }\n` +
    `aliases:\n` +
    `  ${GOOD_ALIAS}: [cloud/good]\n  mana/structured: [cloud/good]\n  mana/vision: [cloud/good]\n` +
    Object.entries(CHAT_ALIASES).map(([name, target]) => `  ${name}: [${target}]\n`).join('') +
    Object.entries(EMBED_ALIASES).map(([name, target]) => embedding(name, target)).join('');
  gw = await spawnGateway({ config, env: { MANA_LLM_ADMIN_KEY: ADMIN } });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await closeFakes(fakes);
});

async function post(path: string, body: Record<string, unknown>): Promise<{ status: number; text: string; requestId: string | null }> {
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text(), requestId: res.headers.get('x-request-id') };
}

const chat = (model: string, extra: Record<string, unknown> = {}) => post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }], ...extra });

/** /metrics answers 200 and the token and cost counters hold the good request's values only. */
async function expectSaneMetrics(): Promise<void> {
  const res = await fetch(`${gw.url}/metrics`);
  expect(res.status).toBe(200);
  await res.text();
  expect(await metric(gw, `mana_llm_tokens_total{alias="${GOOD_ALIAS}",target="cloud/good",kind="prompt"}`)).toBe(GOOD.prompt_tokens);
  expect(await metric(gw, `mana_llm_tokens_total{alias="${GOOD_ALIAS}",target="cloud/good",kind="completion"}`)).toBe(GOOD.completion_tokens);
  expect(await metric(gw, `mana_llm_cost_usd_total{alias="${GOOD_ALIAS}",target="cloud/good"}`)).toBeCloseTo(GOOD_COST, 12);
  for (const [alias, target] of Object.entries({ ...CHAT_ALIASES, ...EMBED_ALIASES })) {
    for (const kind of ['prompt', 'completion']) {
      expect(await metric(gw, `mana_llm_tokens_total{alias="${alias}",target="${target}",kind="${kind}"}`), `${alias} ${kind}`).toBeUndefined();
    }
    expect(await metric(gw, `mana_llm_cost_usd_total{alias="${alias}",target="${target}"}`), `${alias} cost`).toBeUndefined();
  }
}

describe('implausible token counts from upstreams', () => {
  it('chat answers, streamed or not, from both dialects: 200 to the client, usage unknown, /metrics keeps answering', async () => {
    const good = await chat(GOOD_ALIAS);
    expect(good.status).toBe(200);
    await storedRequest(gw, good.requestId);
    await expectSaneMetrics();

    const requestIds: (string | null)[] = [];
    for (const alias of Object.keys(CHAT_ALIASES)) {
      for (const extra of [{}, { stream: true }, { stream: true, stream_options: { include_usage: true } }, {}]) {
        const res = await chat(alias, extra);
        expect(res.status, `${alias} ${JSON.stringify(extra)}`).toBe(200);
        expect(res.text).toContain('still an answer');
        requestIds.push(res.requestId);
        await expectSaneMetrics();
      }
    }
    for (const id of requestIds) {
      const stored = await storedRequest(gw, id);
      expect(stored).toMatchObject({ status: 200, prompt_tokens: null, completion_tokens: null, cost_usd: null });
      expect(stored.attempts.at(-1)).toMatchObject({ outcome: 'ok', prompt_tokens: null, completion_tokens: null, cost_usd: null });
    }
  });

  it('embeddings from both dialects: 200, usage unknown, /metrics keeps answering', async () => {
    const requestIds: (string | null)[] = [];
    for (const alias of Object.keys(EMBED_ALIASES)) {
      for (let i = 0; i < 3; i++) {
        const res = await post('/v1/embeddings', { model: alias, input: 'a text' });
        expect(res.status, alias).toBe(200);
        requestIds.push(res.requestId);
        await expectSaneMetrics();
      }
    }
    for (const id of requestIds) expect(await storedRequest(gw, id)).toMatchObject({ status: 200, prompt_tokens: null, cost_usd: null });
  });

  it('the usage summary sums only plausible counts', async () => {
    const { status, body } = await admin(gw, '/admin/usage/summary?group_by=alias');
    expect(status).toBe(200);
    const rows = new Map<string, Json>(body.data.map((r: Json) => [r.alias, r]));
    expect(rows.get(GOOD_ALIAS)).toMatchObject({ requests: 1, prompt_tokens: GOOD.prompt_tokens, completion_tokens: GOOD.completion_tokens });
    for (const alias of Object.keys(CHAT_ALIASES)) expect(rows.get(alias), alias).toMatchObject({ requests: 4, prompt_tokens: 0, completion_tokens: 0, cost_usd: null });
    for (const alias of Object.keys(EMBED_ALIASES)) expect(rows.get(alias), alias).toMatchObject({ requests: 3, prompt_tokens: 0, cost_usd: null });
  });
});
