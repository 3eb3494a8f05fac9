/**
 * An upstream that echoes our provider key in an error body, written with
 * JSON escapes (`\u002d` as Go and many encoders write it, `\/` as PHP does by
 * default), through the built gateway: on chat completions, Responses and
 * Messages — to an OpenAI-compatible target and to a native Anthropic one —
 * the client's official SDK gets the refusal with its status, and neither the
 * bytes nor what the SDK decodes from them hold the key.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess } from './harness.js';

// Keys with a `/` (base64 alphabets have one), so that PHP's `\/` escapes a character of them.
const OPENAI_KEY = 'sk-hoai/SECRET-1234567890';
const ANTHROPIC_KEY = 'sk-ant-api03/SECRET-0987654321';

/** The key as a `\u`-escaping encoder writes it (every `-` as `\u002d`), and as PHP does (`/` as `\/`). */
const unicodeEscaped = (key: string): string => key.replaceAll('-', '\\u002d');
const phpEscaped = (key: string): string => key.replaceAll('/', '\\/');

let cloud: FakeUpstream;
let claude: FakeUpstream;
let gw: GatewayProcess;

beforeAll(async () => {
  cloud = await startFakeOpenAI();
  claude = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY });
  for (const [model, escape] of [['unicode', unicodeEscaped], ['php', phpEscaped]] as const) {
    cloud.on(model, { kind: 'status', status: 400, body: `{"error":{"message":"bad key Bearer ${escape(OPENAI_KEY)}","type":"invalid_request_error","code":null}}` });
    claude.on(model, { kind: 'status', status: 400, body: `{"type":"error","error":{"type":"invalid_request_error","message":"bad x-api-key ${escape(ANTHROPIC_KEY)}"}}` });
  }
  // Not JSON at all (a proxy's page): scrubbed as text, for every escape form.
  cloud.on('page', { kind: 'status', status: 400, body: `<html>denied for ${unicodeEscaped(OPENAI_KEY)} and ${phpEscaped(OPENAI_KEY)}</html>` });
  const config =
    `settings:\n  probe_interval: 60s\n` +
    `providers:\n` +
    `  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key: "${OPENAI_KEY}" }\n` +
    `  anthropic: { base_url: "${claude.url}" }\n` +
    aliasesYaml(
      {
        'mana/oa-unicode': ['cloud/unicode'],
        'mana/oa-php': ['cloud/php'],
        'mana/oa-page': ['cloud/page'],
        'mana/an-unicode': ['anthropic/unicode'],
        'mana/an-php': ['anthropic/php'],
      },
      ['cloud/unicode'],
    );
  gw = await spawnGateway({ config, env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY } });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([cloud?.close(), claude?.close()]);
});

const MODELS = ['mana/oa-unicode', 'mana/oa-php', 'mana/oa-page', 'mana/an-unicode', 'mana/an-php'];

/** Neither the SDK's error (decoded body, message) nor the raw bytes of the same request hold a key. */
function expectNoKey(error: unknown): void {
  expect(error).toBeInstanceOf(Error);
  const { status, message } = error as { status?: number; message: string };
  expect(status).toBe(400);
  const decoded = JSON.stringify((error as { error?: unknown }).error);
  for (const text of [message, decoded]) {
    expect(text).not.toContain('SECRET');
    expect(text).toContain('[redacted]');
  }
}

async function rawBody(path: string, body: unknown): Promise<string> {
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(400);
  return res.text();
}

describe('a provider key the upstream wrote with JSON escapes never reaches the client', () => {
  const openai = (): OpenAI => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'auth-off', maxRetries: 0 });
  const anthropic = (): Anthropic => new Anthropic({ baseURL: gw.url, apiKey: 'auth-off', maxRetries: 0 });

  it.each(MODELS)('chat completions (%s)', async (model) => {
    const error = await openai()
      .chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expectNoKey(error);
    const text = await rawBody('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] });
    expect(text).not.toContain('SECRET');
    expect(JSON.stringify(JSON.parse(text))).not.toContain('SECRET');
  });

  it.each(MODELS)('Responses (%s)', async (model) => {
    const error = await openai()
      .responses.create({ model, input: 'hi' })
      .catch((e: unknown) => e);
    expectNoKey(error);
    const text = await rawBody('/v1/responses', { model, input: 'hi' });
    expect(text).not.toContain('SECRET');
    expect(JSON.stringify(JSON.parse(text))).not.toContain('SECRET');
  });

  it.each(MODELS)('Messages (%s)', async (model) => {
    const error = await anthropic()
      .messages.create({ model, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expectNoKey(error);
    const text = await rawBody('/v1/messages', { model, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    expect(text).not.toContain('SECRET');
    expect(JSON.stringify(JSON.parse(text))).not.toContain('SECRET');
  });
});
