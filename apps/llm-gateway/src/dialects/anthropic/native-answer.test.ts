/**
 * Native answers on shapes the testkit's Anthropic fake does not write: keys
 * in another order, escapes the client must get byte for byte, a `model` the
 * text cannot be spliced at, an event type newer than the gateway.
 */
import { describe, expect, it } from 'vitest';
import type { JsonResult, RequestOutcome, StreamResult } from '@mana/llm-router';
import type { DecodedRequest } from '../codec.js';
import { NativeStream, nativeMessage } from './native-answer.js';

const REQUEST: DecodedRequest = { ok: true, model: 'mana/reasoning', stream: true, body: { messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 10 } };
const OUTCOME: RequestOutcome & { target: string } = { alias: 'mana/reasoning', target: 'anthropic/claude-x', attempts: [], upstreamCalls: 1, retryAfterSeconds: undefined };

const json = (text: string | undefined, body: Record<string, unknown>): JsonResult => ({ kind: 'json', protocol: 'anthropic', status: 200, body, text, usage: undefined, headers: {}, outcome: OUTCOME });

describe('nativeMessage', () => {
  it("replaces only the top-level model's value in the upstream's text, never a model inside the content", () => {
    const text = '{"content":[{"type":"text","text":"model: \\u00e9 \\"claude-x\\""}],"model" : "claude-x","type":"message","usage":{"input_tokens":3}}';
    expect(nativeMessage(json(text, JSON.parse(text) as Record<string, unknown>), REQUEST)).toBe(text.replace('"claude-x",', '"mana/reasoning",'));
  });

  it('serialises the message again when the text cannot be spliced (no text, or no top-level model)', () => {
    const body = { id: 'msg_1', type: 'message', content: [] };
    expect(JSON.parse(nativeMessage(json(undefined, body), REQUEST))).toEqual({ ...body, model: 'mana/reasoning' });
    expect(JSON.parse(nativeMessage(json(JSON.stringify(body), body), REQUEST))).toEqual({ ...body, model: 'mana/reasoning' });
  });
});

describe('NativeStream', () => {
  const result: StreamResult = { kind: 'stream', protocol: 'anthropic', events: (async function* () {})(), usage: undefined, headers: {}, outcome: OUTCOME };

  it("frames each event under its own type, message_start's model set to the alias, other events byte for byte", () => {
    const encoder = new NativeStream(result, REQUEST);
    const start = '{"type":"message_start","message":{"id":"msg_1","model":"claude-x","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}';
    const later = '{ "type" : "future_event", "model": "claude-x" }';
    const delta = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\u00e9"}}';
    expect(encoder.event(start)).toBe(`event: message_start\ndata: ${start.replace('"claude-x"', '"mana/reasoning"')}\n\n`);
    expect(encoder.event(delta)).toBe(`event: content_block_delta\ndata: ${delta}\n\n`);
    expect(encoder.event(later)).toBe(`event: future_event\ndata: ${later}\n\n`);
    // message_stop was the upstream's own last event.
    expect(encoder.end()).toBe('');
  });
});
