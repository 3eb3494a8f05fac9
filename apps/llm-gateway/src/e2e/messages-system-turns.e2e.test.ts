/**
 * Mid-conversation `system` messages on `/v1/messages` and `count_tokens`
 * (Claude Code sends them for every model id it does not know, so for every
 * alias), with @anthropic-ai/sdk 1.10.0 through the built gateway. An
 * `anthropic` target gets them as written, with the client's `anthropic-beta`;
 * an OpenAI-compatible one gets a chat `system` message where the turn stood.
 * Every alias's first target is dead.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingPort, startFakeAnthropic, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, deadThenCloud, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const KEY = 'sk-mana-system-turns-e2e-7a1f';
const ANTHROPIC_KEY = 'sk-ant-system-turns-e2e-3c9d';
const BETA = 'claude-code-20250219,mid-conversation-system-2026-04-07';

let claude: FakeUpstream;
let cloud: FakeUpstream;
let gw: GatewayProcess;
let client: Anthropic;

beforeAll(async () => {
  claude = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY });
  cloud = await startFakeOpenAI();
  claude.on('claude-sonnet-4-5', { kind: 'answer', content: 'Native answer.', chunks: 2 });
  cloud.on('m1', { kind: 'answer', content: 'Translated answer.', chunks: 2 });
  const dead = await refusingPort();
  const config =
    deadThenCloud(dead, cloud.baseUrl, `  anthropic: { base_url: "${claude.url}" }\n`) +
    aliasesYaml({ 'mana/reasoning': ['dead/m0', 'anthropic/claude-sonnet-4-5'], 'mana/chat': ['dead/m0', 'cloud/m1'] }, ['dead/m0', 'cloud/m1']);
  gw = await spawnGateway({ config, env: { MANA_LLM_API_KEYS: KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY } });
  client = new Anthropic({ baseURL: gw.url, apiKey: KEY, maxRetries: 0, defaultHeaders: { 'anthropic-beta': BETA } });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([claude?.close(), cloud?.close()]);
});

/** A conversation as Claude Code writes it: the system turn after the user's, once as a string and once as text blocks. */
const CONVERSATION: Anthropic.MessageCreateParams['messages'] = [
  { role: 'user', content: [{ type: 'text', text: 'List the files.' }] },
  { role: 'system', content: 'Available agent types for the Agent tool: general-purpose.' },
  { role: 'assistant', content: 'Which folder?' },
  { role: 'system', content: [{ type: 'text', text: 'The working folder is /src.' }, { type: 'text', text: 'Be brief.' }] },
  { role: 'user', content: 'src' },
];

describe('mid-conversation system messages', () => {
  it('an anthropic target gets them as written, with the client betas; the SDK reads the answer', async () => {
    const stream = client.messages.stream({ model: 'mana/reasoning', max_tokens: 64, system: 'You are terse.', messages: CONVERSATION });
    const message = await stream.finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'Native answer.' }]);
    const sent = claude.requests.at(-1)!;
    expect((sent.body as Json).messages).toEqual(CONVERSATION);
    expect(sent.headers['anthropic-beta']).toBe(BETA);
  });

  it('an OpenAI-compatible target gets chat system messages in place (text blocks joined by a newline)', async () => {
    const message = await client.messages.create({ model: 'mana/chat', max_tokens: 64, system: 'You are terse.', messages: CONVERSATION });
    expect(message.content).toEqual([{ type: 'text', text: 'Translated answer.' }]);
    expect((cloud.requests.at(-1)!.body as Json).messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'List the files.' },
      { role: 'system', content: 'Available agent types for the Agent tool: general-purpose.' },
      { role: 'assistant', content: 'Which folder?' },
      { role: 'system', content: 'The working folder is /src.\nBe brief.' },
      { role: 'user', content: 'src' },
    ]);
  });

  it('count_tokens counts them, on both aliases; nothing goes upstream', async () => {
    const before = claude.requests.length + cloud.requests.length;
    const without = CONVERSATION.filter((m) => m.role !== 'system');
    for (const model of ['mana/reasoning', 'mana/chat']) {
      const withSystem = await client.messages.countTokens({ model, messages: CONVERSATION });
      const plain = await client.messages.countTokens({ model, messages: without });
      // The two system turns hold ~20 words: they must show in the count.
      expect(withSystem.input_tokens).toBeGreaterThan(plain.input_tokens + 10);
    }
    expect(claude.requests.length + cloud.requests.length).toBe(before);
  });

  it("a system turn that is not text is a 400 naming it; another role says that role is not supported", async () => {
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } };
    const bad = await client.messages
      .create({ model: 'mana/chat', max_tokens: 8, messages: [{ role: 'user', content: 'x' }, { role: 'system', content: [image] }] } as unknown as Anthropic.MessageCreateParamsNonStreaming)
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect((bad as InstanceType<typeof Anthropic.BadRequestError>).message).toContain('messages[1].content[0] must be a text block');
    const role = await client.messages
      .create({ model: 'mana/chat', max_tokens: 8, messages: [{ role: 'user', content: 'x' }, { role: 'developer', content: 'y' }] } as unknown as Anthropic.MessageCreateParamsNonStreaming)
      .catch((e: unknown) => e);
    expect(role).toBeInstanceOf(Anthropic.BadRequestError);
    expect((role as InstanceType<typeof Anthropic.BadRequestError>).message).toContain("role 'developer' is not supported");
  });
});

describe('a request refused for its body', () => {
  it('answers with the alias it named and request-id; its log line has its real stream value and alias', async () => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY, 'x-request-id': 'refused-named-1' },
      body: JSON.stringify({ model: 'mana/chat', stream: true, max_tokens: 8, messages: [{ role: 'developer', content: 'x' }] }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('x-mana-llm-alias')).toBe('mana/chat');
    expect(res.headers.get('request-id')).toBe('refused-named-1');
    const line = await gw.waitForLog((l) => l.req_id === 'refused-named-1');
    expect(line).toMatchObject({ status: 400, stream: true, alias: 'mana/chat' });
  });

  it('/v1/responses carries request-id on a 400, as /v1/messages does', async () => {
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, 'x-request-id': 'refused-responses-1' },
      body: JSON.stringify({ model: 'mana/chat', input: 'x', previous_response_id: 'resp_1' }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('request-id')).toBe('refused-responses-1');
    expect(res.headers.get('x-mana-llm-alias')).toBe('mana/chat');
  });
});
