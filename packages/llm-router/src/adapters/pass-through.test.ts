import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load-config.js';
import { otherAliases } from '../config/test-configs.js';
import { createRouter, type Router } from '../router.js';
import type { BodyText, ChatRequestBody, RouterRequest } from '../types.js';

/**
 * With the client's text (`bodyText`), an OpenAI-compatible upstream receives
 * that text with only `model` replaced, plus members the router must add;
 * where a text edit could be ambiguous it receives the serialised body as before.
 */

let received: string[] = [];
let upstream: Server;
let upstreamUrl: string;
let router: Router | undefined;

const COMPLETION = JSON.stringify({
  id: 'c1',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
});
const CHUNK = JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] });

beforeAll(async () => {
  // Records every request body byte for byte (the testkit's fakes keep the parsed JSON only).
  upstream = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      received.push(text);
      if ((JSON.parse(text) as { stream?: boolean }).stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`data: ${CHUNK}\n\ndata: [DONE]\n\n`);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end(COMPLETION);
      }
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
});
afterEach(async () => {
  await router?.close();
  router = undefined;
  received = [];
});
afterAll(() => new Promise((resolve) => upstream.close(resolve)));

function start(): Router {
  const config = parseConfig(
    `settings: { probe_interval: 1h }
providers:
  up: { type: openai, base_url: "${upstreamUrl}", api_key_required: false }
aliases:
  mana/fast-text: [up/target-model]
${otherAliases('mana/fast-text')}`,
    { env: {} },
  );
  router = createRouter({ config });
  return router;
}

/** A request as the gateway makes it: the parsed body and the text with the span of its model value. */
function fromText(text: string): RouterRequest {
  const body = JSON.parse(text) as ChatRequestBody & { model: string };
  const modelStart = text.indexOf(JSON.stringify(body.model));
  const bodyText: BodyText = { text, modelStart, modelEnd: modelStart + JSON.stringify(body.model).length };
  return { model: body.model, body, bodyText, stream: body.stream === true };
}

async function send(r: Router, request: RouterRequest): Promise<string> {
  const result = await r.execute(request);
  if (result.kind === 'stream') for await (const event of result.events) void event;
  expect(received).toHaveLength(1);
  return received[0]!;
}

describe('the body sent to an OpenAI-compatible upstream', () => {
  it("is the client's text with only model replaced: numbers, escapes and layout as written", async () => {
    const text = '{\n  "model": "mana/fast-text",\n  "stream": false,\n  "messages": [{"role": "user", "content": "caf\\u00e9"}],\n  "seed": 12345678901234567890,\n  "temperature": 1.0\n}';
    const sent = await send(start(), fromText(text));
    expect(sent).toBe(text.replace('"mana/fast-text"', '"target-model"'));
  });

  it('gets the members the router adds inserted when the client did not send them', async () => {
    const text = '{"model":"mana/fast-text","messages":[{"role":"user","content":"hi"}]}';
    const sent = await send(start(), fromText(text));
    expect(sent).toBe('{"stream":false,"model":"target-model","messages":[{"role":"user","content":"hi"}]}');

    received = [];
    const streamed = await send(start(), fromText('{"model":"mana/fast-text","stream":true,"messages":[{"role":"user","content":"hi"}]}'));
    expect(streamed).toBe('{"stream_options":{"include_usage":true},"model":"target-model","stream":true,"messages":[{"role":"user","content":"hi"}]}');
  });

  it('is serialised from the body when a member to change is already there, or when there is no text', async () => {
    // `stream: null` must become false and `stream_options` gains include_usage: a text edit would leave two members.
    const text = '{"model":"mana/fast-text","stream":null,"messages":[{"role":"user","content":"hi"}],"seed":12345678901234567890}';
    const sent = await send(start(), fromText(text));
    expect(sent).toBe(JSON.stringify({ ...(JSON.parse(text) as object), model: 'target-model', stream: false }));

    received = [];
    const withOptions = '{"model":"mana/fast-text","stream":true,"stream_options":{},"messages":[{"role":"user","content":"hi"}]}';
    const streamed = await send(start(), fromText(withOptions));
    expect(JSON.parse(streamed)).toEqual({ model: 'target-model', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });

    received = [];
    const { bodyText: _dropped, ...plain } = fromText('{"model":"mana/fast-text","messages":[{"role":"user","content":"hi"}]}');
    expect(await send(start(), plain)).toBe('{"model":"target-model","messages":[{"role":"user","content":"hi"}],"stream":false}');
  });
});
