/**
 * CORS through the built gateway: off by default (a preflight is 405, no CORS
 * header anywhere); with MANA_LLM_CORS_ORIGINS, a correct preflight answer and
 * readable X-Mana-LLM-* / X-Request-Id on actual responses, for the listed
 * origins only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess } from './harness.js';

const APP = 'https://app.example.com';
const KEY = 'cors-e2e-key';

let cloud: FakeUpstream;
let withCors: GatewayProcess;
let without: GatewayProcess;

function preflight(gateway: GatewayProcess, origin: string, path = '/v1/chat/completions'): Promise<Response> {
  return fetch(`${gateway.url}${path}`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type, x-stainless-os',
    },
  });
}

function chat(gateway: GatewayProcess, origin: string, stream = false, key = KEY): Promise<Response> {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { origin, 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'hi' }], stream }),
  });
}

const CORS_HEADERS = ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-expose-headers'];

function corsHeadersOf(res: Response): string[] {
  return CORS_HEADERS.filter((name) => res.headers.has(name));
}

beforeAll(async () => {
  cloud = await startFakeOpenAI();
  cloud.on('m1', { kind: 'answer', content: 'hello browser', chunks: 2 });
  const config = `providers:\n  cloud: { type: openai, base_url: "${cloud.baseUrl}" }\n` + aliasesYaml({}, ['cloud/m1']);
  [withCors, without] = await Promise.all([
    spawnGateway({ config, env: { MANA_LLM_API_KEYS: KEY, MANA_LLM_CORS_ORIGINS: `${APP},http://localhost:5173` } }),
    spawnGateway({ config, env: { MANA_LLM_API_KEYS: KEY } }),
  ]);
});

afterAll(async () => {
  await Promise.all([withCors?.stop(), without?.stop()]);
  await cloud?.close();
});

describe('CORS on', () => {
  it('a preflight from an allowed origin → 204 with origin, methods from the route table, the asked headers, max age, Vary', async () => {
    const res = await preflight(withCors, APP);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP);
    expect(res.headers.get('access-control-allow-methods')).toBe('POST');
    expect(res.headers.get('access-control-allow-headers')).toBe('authorization, content-type, x-stainless-os');
    expect(res.headers.get('access-control-max-age')).toBe('600');
    expect(res.headers.get('vary')).toContain('Origin');
    expect(await res.text()).toBe('');
    const probe = await preflight(withCors, 'http://localhost:5173', '/healthz');
    expect(probe.headers.get('access-control-allow-methods')).toBe('GET, HEAD');
  });

  it('actual responses to an allowed origin expose X-Mana-LLM-* and X-Request-Id (JSON, stream and errors)', async () => {
    const json = await chat(withCors, APP);
    expect(json.status).toBe(200);
    expect(json.headers.get('access-control-allow-origin')).toBe(APP);
    const exposed = json.headers.get('access-control-expose-headers')!.toLowerCase().split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(['x-mana-llm-resolved', 'x-mana-llm-attempts', 'x-mana-llm-alias', 'x-request-id']));
    expect(json.headers.get('vary')).toBe('Origin');
    expect(json.headers.get('x-mana-llm-resolved')).toBe('cloud/m1');
    await json.text();

    const stream = await chat(withCors, APP, true);
    expect(stream.headers.get('access-control-allow-origin')).toBe(APP);
    expect(await stream.text()).toContain('[DONE]');

    const refused = await chat(withCors, APP, false, 'wrong-key');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(APP);
    await refused.text();
  });

  it('a disallowed origin gets no CORS header: its preflight is 405 as without CORS, its request is served without them', async () => {
    const res = await preflight(withCors, 'https://evil.example');
    expect(res.status).toBe(405);
    expect(corsHeadersOf(res)).toEqual([]);
    expect(res.headers.get('vary')).toBe('Origin');
    await res.text();
    const actual = await chat(withCors, 'https://evil.example');
    expect(actual.status).toBe(200);
    expect(corsHeadersOf(actual)).toEqual([]);
    await actual.text();
  });
});

describe('CORS off (the default)', () => {
  it('a preflight is 405 and no response carries a CORS header', async () => {
    const res = await preflight(without, APP);
    expect(res.status).toBe(405);
    expect(corsHeadersOf(res)).toEqual([]);
    await res.text();
    const actual = await chat(without, APP);
    expect(actual.status).toBe(200);
    expect(corsHeadersOf(actual)).toEqual([]);
    expect(actual.headers.get('vary')).toBeNull();
    await actual.text();
  });
});
