/**
 * A slow answer is not a dead provider. Seen on the built gateway: two
 * requests that legitimately took longer than first_byte_timeout (long
 * generations) opened the provider's breaker, and every other client got 503
 * for the unhealthy period. Now each such timeout fails its own request and
 * probes the provider at once; the probe (which a busy but reachable server
 * answers) decides its health.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';

let cloud: FakeUpstream;
let gw: GatewayProcess;

beforeAll(async () => {
  cloud = await startFakeOpenAI();
  cloud.on('long-generation', { kind: 'answer', headerDelayMs: 1_500 });
  const config =
    `settings: { first_byte_timeout: 300ms, failure_threshold: 2, probe_interval: 1h }\n` +
    `providers:\n  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false }\n` +
    aliasesYaml({ 'mana/long-form': ['cloud/long-generation'] }, ['cloud/m1']);
  gw = await spawnGateway({ config });
});

afterAll(async () => {
  await gw?.stop();
  await cloud?.close();
});

const ask = (model: string): Promise<Response> =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Write a long essay.' }] }),
  });

describe('two slow requests', () => {
  it('fail over themselves but do not make other clients get 503', async () => {
    const probesBefore = cloud.probeCount();
    const slow = await Promise.all([ask('mana/long-form'), ask('mana/long-form')]);
    for (const res of slow) {
      expect(res.status).toBe(502);
      const body: Json = await res.json();
      expect(body.error.attempts).toEqual([expect.objectContaining({ target: 'cloud/long-generation', reason: 'first_byte_timeout' })]);
    }
    // The timeouts asked the provider itself (out of band), and it answered.
    const deadline = Date.now() + 3_000;
    while (cloud.probeCount() === probesBefore && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(cloud.probeCount()).toBeGreaterThan(probesBefore);
    await new Promise((resolve) => setTimeout(resolve, 100)); // the probe's answer is recorded

    const other = await ask('mana/fast-text');
    expect(other.status).toBe(200);
    expect(other.headers.get('x-mana-llm-resolved')).toBe('cloud/m1');
    const health: Json = await (await fetch(`${gw.url}/v1/health`)).json();
    expect(health.providers.find((p: Json) => p.provider === 'cloud')).toMatchObject({ healthy: true, consecutive_failures: 0 });
  });
});
