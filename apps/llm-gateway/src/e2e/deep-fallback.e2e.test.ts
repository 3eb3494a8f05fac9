/**
 * Deep fallback end to end: the built gateway process, a fake Ollama with a
 * small context and fake OpenAI-compatible upstreams, a config as a user
 * writes it. What a client sees (status, headers, body) and what operators
 * see (metrics, log line) for each reason.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOllama, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const LLAMA_CPP_CONTEXT_400 = (
  JSON.parse(
    readFileSync(new URL('../../../../packages/llm-router/src/attempt/fixtures/context-length-errors.json', import.meta.url), 'utf8'),
  ) as { contextLength: { provider: string; status: number; body: string }[] }
).contextLength.find((f) => f.provider === 'llama.cpp' && f.status === 400)!.body;

let local: FakeUpstream;
let cloud: FakeUpstream;
let gw: GatewayProcess;

beforeAll(async () => {
  local = await startFakeOllama({ models: ['gemma3:4b'] });
  cloud = await startFakeOpenAI();
  cloud.on('big', { kind: 'answer', content: 'from the big model' });
  cloud.on('llamacpp', { kind: 'status', status: 400, body: LLAMA_CPP_CONTEXT_400 });
  cloud.on('prose', { kind: 'answer', content: 'Sure! Here is the JSON you asked for.' });
  cloud.on('json', { kind: 'answer', content: '{"city": "Berlin"}' });
  const config =
    `settings:\n  probe_interval: 60s\n` +
    `providers:\n` +
    `  ollama: { type: ollama, base_url: "${local.url}", options: { num_ctx: 512 }, settings: { context_reserve: 64 } }\n` +
    `  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key: "sk-e2e-deep" }\n` +
    aliasesYaml(
      {
        'mana/long-form': ['ollama/gemma3:4b', 'cloud/big'],
        'mana/reasoning': ['cloud/llamacpp', 'cloud/big'],
        'mana/fast-text': ['ollama/gemma3:4b', '{ target: cloud/big, settings: { context_window: 600 } }'],
      },
      ['cloud/big'],
    ).replace('  mana/structured:\n', '  mana/structured:\n    fail_over_on: [empty, invalid_json]\n')
      .replace(/( {2}mana\/structured:\n(?:.*\n)*? {4}chain:\n)(?: {6}- .*\n)+/, '$1      - cloud/prose\n      - cloud/json\n');
  gw = await spawnGateway({ config });
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all([local?.close(), cloud?.close()]);
});

const longPrompt = Array.from({ length: 600 }, (_, i) => `sentence ${i} of a long report.`).join(' ');

function chat(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function metric(line: RegExp): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  const found = text.split('\n').find((l) => line.test(l));
  return found === undefined ? 0 : Number(found.slice(found.lastIndexOf(' ') + 1));
}

describe('deep fallback through the gateway', () => {
  it('a prompt over the local window skips it (no call) and the cloud answers; metrics and the log say context_too_small', async () => {
    const res = await chat({ model: 'mana/long-form', messages: [{ role: 'user', content: longPrompt }] });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/big');
    expect(res.headers.get('x-mana-llm-attempts')).toBe('1');
    expect(((await res.json()) as Json).choices[0].message.content).toBe('from the big model');
    expect(local.count('gemma3:4b')).toBe(0);
    const requestId = res.headers.get('x-request-id');
    const line = await gw.waitForLog((l) => l.msg === 'request' && l.req_id === requestId);
    expect((line as Json).attempts[0]).toMatchObject({ target: 'ollama/gemma3:4b', outcome: 'skipped', reason: 'context_too_small' });
    expect(await metric(/^mana_llm_fallback_total\{.*from_model="ollama\/gemma3:4b".*reason="context_too_small"/)).toBe(1);
  });

  it('a short prompt is served locally, with num_ctx sent', async () => {
    const res = await chat({ model: 'mana/long-form', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.headers.get('x-mana-llm-resolved')).toBe('ollama/gemma3:4b');
    expect((local.requests.at(-1)!.body as Json).options.num_ctx).toBe(512);
  });

  it('no target fits → 400 context_length_exceeded naming each window, nothing called', async () => {
    const before = cloud.count('big');
    const res = await chat({ model: 'mana/fast-text', messages: [{ role: 'user', content: longPrompt }] });
    expect(res.status).toBe(400);
    const body = (await res.json()) as Json;
    expect(body.error.code).toBe('context_length_exceeded');
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.param).toBe('messages');
    expect(body.error.message).toContain('context window 512');
    expect(body.error.message).toContain('context window 600');
    expect(body.error.attempts.map((a: Json) => a.reason)).toEqual(['context_too_small', 'context_too_small']);
    expect(cloud.count('big')).toBe(before);
  });

  it("an upstream's context-length 400 fails over (reason context_length)", async () => {
    const res = await chat({ model: 'mana/reasoning', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/big');
    expect(res.headers.get('x-mana-llm-attempts')).toBe('2');
    expect(await metric(/^mana_llm_fallback_total\{.*from_model="cloud\/llamacpp".*reason="context_length"/)).toBe(1);
  });

  it('mana/structured: prose where JSON was asked for fails over (invalid_json); an invalid schema is a 400 before any call', async () => {
    const res = await chat({ model: 'mana/structured', messages: [{ role: 'user', content: 'city?' }], response_format: { type: 'json_object' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/json');
    expect(await metric(/^mana_llm_fallback_total\{.*from_model="cloud\/prose".*reason="invalid_json"/)).toBe(1);

    const calls = cloud.count();
    const bad = await chat({
      model: 'mana/structured',
      messages: [{ role: 'user', content: 'city?' }],
      response_format: { type: 'json_schema', json_schema: { name: 'c', schema: { type: 'object', required: 'city' } } },
    });
    expect(bad.status).toBe(400);
    const error = ((await bad.json()) as Json).error;
    expect(error).toMatchObject({ code: 'invalid_schema', type: 'invalid_request_error', param: 'response_format' });
    expect(cloud.count()).toBe(calls);
  });
});
