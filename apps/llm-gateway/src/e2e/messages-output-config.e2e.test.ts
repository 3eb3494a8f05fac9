/**
 * A Messages request's `output_config` (Claude Code asks for its session
 * titles with `format`, and sends `effort` always), with @anthropic-ai/sdk
 * 1.10.0 through the built gateway: `format` reaches a chat target as
 * `response_format` and the alias's JSON checks apply to the answer;
 * `effort` reaches it as `reasoning_effort`, and an `anthropic` target gets
 * `output_config` as written.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingPort, startFakeAnthropic, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, deadThenCloud, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const KEY = 'sk-mana-output-config-e2e-2f8a';
const ANTHROPIC_KEY = 'sk-ant-output-config-e2e-5e1b';
const SCHEMA = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'], additionalProperties: false };
const OUTPUT = { format: { type: 'json_schema' as const, schema: SCHEMA }, effort: 'high' as const };

let claude: FakeUpstream;
let cloud: FakeUpstream;
let gw: GatewayProcess;
let client: Anthropic;

beforeAll(async () => {
  claude = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY });
  cloud = await startFakeOpenAI();
  claude.on('claude-sonnet-4-5', { kind: 'answer', content: '{"title":"Native"}' });
  cloud.on('m1', { kind: 'answer', content: '{"title":"Translated"}' });
  cloud.on('prose', { kind: 'answer', content: 'Here is a title: Prose' });
  const dead = await refusingPort();
  const config =
    deadThenCloud(dead, cloud.baseUrl, `  anthropic: { base_url: "${claude.url}" }\n`) +
    aliasesYaml(
      { 'mana/reasoning': ['dead/m0', 'anthropic/claude-sonnet-4-5'], 'mana/chat': ['dead/m0', 'cloud/m1'], 'mana/checked': ['cloud/prose', 'cloud/m1'] },
      ['dead/m0', 'cloud/m1'],
    ).replace('  mana/checked:\n', '  mana/checked:\n    fail_over_on: [invalid_json]\n');
  gw = await spawnGateway({ config, env: { MANA_LLM_API_KEYS: KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY } });
  client = new Anthropic({ baseURL: gw.url, apiKey: KEY, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([claude?.close(), cloud?.close()]);
});

const ASK = { max_tokens: 64, messages: [{ role: 'user' as const, content: 'Title this session.' }], output_config: OUTPUT };

describe('output_config', () => {
  it('a chat target gets format as response_format and effort as reasoning_effort', async () => {
    const message = await client.messages.create({ model: 'mana/chat', ...ASK });
    expect(message.content).toEqual([{ type: 'text', text: '{"title":"Translated"}' }]);
    const sent = cloud.requests.at(-1)!.body as Json;
    expect(sent.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema: SCHEMA, strict: true } });
    expect(sent.reasoning_effort).toBe('high');
  });

  it("the alias's JSON check applies: a free-text answer fails over to a target that answers the schema", async () => {
    const res = await client.messages.create({ model: 'mana/checked', ...ASK }).withResponse();
    expect(res.data.content).toEqual([{ type: 'text', text: '{"title":"Translated"}' }]);
    expect(res.response.headers.get('x-mana-llm-attempts')).toBe('2');
    expect(res.response.headers.get('x-mana-llm-resolved')).toBe('cloud/m1');
  });

  it('an anthropic target gets output_config as written', async () => {
    const message = await client.messages.create({ model: 'mana/reasoning', ...ASK });
    expect(message.content).toEqual([{ type: 'text', text: '{"title":"Native"}' }]);
    expect((claude.requests.at(-1)!.body as Json).output_config).toEqual(OUTPUT);
  });

  it('a format that is not json_schema is a 400 naming it', async () => {
    const error = await client.messages
      .create({ model: 'mana/chat', ...ASK, output_config: { format: { type: 'xml' } } } as unknown as Anthropic.MessageCreateParamsNonStreaming)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).message).toContain('output_config.format.type');
  });
});
