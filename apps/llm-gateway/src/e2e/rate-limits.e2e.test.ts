/**
 * `rpm` on a cloud provider is its quota, kept by the gateway: a burst above it
 * is spread to the next target of the chain, and the provider — a fake that
 * answers 429 past N requests a minute, as a cloud account does — never
 * refuses one. The same burst without `rpm` declared does meet its 429s (the
 * control: the fake's quota is real). Seen through the official OpenAI client,
 * streamed and not; /v1/aliases shows the window and the metrics the spills.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const QUOTA = 3;
const BURST = 8;
let cloud: FakeUpstream;
let undeclared: FakeUpstream;
let spare: FakeUpstream;
let gw: GatewayProcess;

beforeAll(async () => {
  [cloud, undeclared, spare] = await Promise.all([
    startFakeOpenAI({ name: 'cloud', quota: { requests: QUOTA } }),
    startFakeOpenAI({ name: 'undeclared', quota: { requests: QUOTA } }),
    startFakeOpenAI({ name: 'spare' }),
  ]);
  const config =
    `settings: { probe_interval: 1h }\n` +
    `providers:\n` +
    `  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false, rpm: ${QUOTA} }\n` +
    `  undeclared: { type: openai, base_url: "${undeclared.baseUrl}", api_key_required: false }\n` +
    `  spare: { type: openai, base_url: "${spare.baseUrl}", api_key_required: false }\n` +
    aliasesYaml({ 'mana/fast-text': ['cloud/m', 'spare/m'], 'mana/long-form': ['undeclared/m', 'spare/m'] }, ['spare/m']);
  gw = await spawnGateway({ config });
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all([cloud?.close(), undeclared?.close(), spare?.close()]);
});

/** BURST requests at once to `model`, every other one streamed; the text each answer carried. */
async function burst(model: string): Promise<string[]> {
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const messages = [{ role: 'user' as const, content: 'hi' }];
  return Promise.all(
    Array.from({ length: BURST }, async (_, i) => {
      if (i % 2 === 0) return (await client.chat.completions.create({ model, messages })).choices[0]!.message.content ?? '';
      let text = '';
      for await (const chunk of await client.chat.completions.create({ model, messages, stream: true })) text += chunk.choices[0]?.delta.content ?? '';
      return text;
    }),
  );
}

const chats = (fake: FakeUpstream, model = 'm'): number => fake.requests.filter((q) => q.operation === 'chat' && q.model === model).length;

describe('rpm on a cloud provider', () => {
  it('spreads a burst above it to the next target, and the provider never answers 429', async () => {
    const texts = await burst('mana/fast-text');
    expect(texts.filter((t) => t.includes('via cloud'))).toHaveLength(QUOTA);
    expect(texts.filter((t) => t.includes('via spare'))).toHaveLength(BURST - QUOTA);
    expect(cloud.quotaRefusals()).toBe(0);
    expect(chats(cloud)).toBe(QUOTA);
    expect(chats(spare)).toBe(BURST - QUOTA);

    const view: Json = await (await fetch(`${gw.url}/v1/aliases`)).json();
    const target = view.data.find((a: Json) => a.alias === 'mana/fast-text').chain[0];
    expect(target.rate).toEqual([{ unit: 'rpm', counts: 'provider', used: QUOTA, limit: QUOTA, queued: 0, saturated: true }]);
    expect(target.load).toBeUndefined(); // no max_concurrency declared

    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toContain(`mana_llm_spills_total{alias="mana/fast-text",from="cloud/m",to="spare/m",reason="rate_limited"} ${BURST - QUOTA}`);
  });

  it('without rpm declared, the same burst meets the provider\'s 429s (the quota the test relies on is real)', async () => {
    const texts = await burst('mana/long-form');
    expect(texts.every((t) => t.length > 0)).toBe(true); // still all answered: the 429s failed over
    expect(undeclared.quotaRefusals()).toBeGreaterThan(0);
  });
});
