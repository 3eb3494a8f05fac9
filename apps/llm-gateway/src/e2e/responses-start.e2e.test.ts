/**
 * `/v1/responses` on the gateway started as the README tells a user to:
 * `pnpm start` in the repository root, configured by environment variables,
 * the alias's first target dead. The openai SDK, as the README's example
 * uses it: one answer and one stream, after failover.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingPort, startFakeOpenAI, waitUntil, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, deadThenCloud, pnpmStart, spawnGateway, type GatewayProcess } from './harness.js';

// `pnpm start` checks the build with turbo first: slower than `node dist/main.js`.
const START_TIMEOUT_MS = 90_000;
const KEY = 'sk-mana-responses-start-e2e-2b61';

let cloud: FakeUpstream;
let gw: GatewayProcess;

beforeAll(async () => {
  cloud = await startFakeOpenAI();
  cloud.on('m1', { kind: 'answer', content: 'A haiku about failover', chunks: 3 });
  const config = deadThenCloud(await refusingPort(), cloud.baseUrl) + aliasesYaml({}, ['dead/m0', 'cloud/m1']);
  gw = await spawnGateway({ command: pnpmStart(), config, env: { MANA_LLM_API_KEYS: KEY, LOG_LEVEL: 'info' } });
}, START_TIMEOUT_MS);

afterAll(async () => {
  await gw?.stop();
  await cloud?.close();
});

describe('pnpm start, then the Responses API as the README shows it', () => {
  it('responses.create and responses.stream answer through the alias, the second target resolved', async () => {
    const llm = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const { data, response } = await llm.responses.create({ model: 'mana/long-form', instructions: 'Be brief.', input: 'Write a haiku about failover' }).withResponse();
    expect(data.output_text).toBe('A haiku about failover');
    expect(response.headers.get('x-mana-llm-resolved')).toBe('cloud/m1');
    const pieces: string[] = [];
    const stream = llm.responses.stream({ model: 'mana/long-form', input: 'Say hi' });
    stream.on('response.output_text.delta', (event) => pieces.push(event.delta));
    const final = await stream.finalResponse();
    expect(pieces.length).toBe(3);
    expect(final).toMatchObject({ status: 'completed', output_text: 'A haiku about failover' });
    // The stream's log line is written as it ends, which the client may see first.
    const lines = () => gw.logs.filter((l) => l.msg === 'request' && l.api === 'responses');
    await waitUntil('both request log lines', async () => lines().length >= 2);
    expect(lines().map((l) => [l.path, l.status])).toEqual([
      ['/v1/responses', 200],
      ['/v1/responses', 200],
    ]);
  });
});
