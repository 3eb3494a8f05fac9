import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load-config.js';
import { otherAliases } from '../config/test-configs.js';
import type { ProviderConfig } from '../types.js';
import { UnsupportedRequestError } from './adapter.js';
import { toOllamaRequest } from './ollama-request.js';

const snapshot = parseConfig(
  `providers:\n  ollama: { type: ollama, base_url: "http://127.0.0.1:1", options: { num_ctx: 8192, temperature: 0.1 } }\naliases:\n  mana/long-form: [ollama/x]\n${otherAliases('mana/long-form')}`,
  { env: {} },
);
const provider = snapshot.providers.get('ollama') as ProviderConfig;

describe('toOllamaRequest', () => {
  it('maps sampling parameters into options over the provider options', () => {
    const out = toOllamaRequest(
      {
        messages: [{ role: 'user', content: 'hi' }],
        temperature: 0.7,
        top_p: 0.9,
        top_k: 40,
        max_tokens: 50,
        stop: 'END',
        seed: 42,
        response_format: { type: 'json_object' },
      },
      'gemma3:4b',
      provider,
      false,
    );
    expect(out).toEqual({
      model: 'gemma3:4b',
      messages: [{ role: 'user', content: 'hi' }],
      stream: false,
      options: { num_ctx: 8192, temperature: 0.7, top_p: 0.9, top_k: 40, num_predict: 50, stop: ['END'], seed: 42 },
      format: 'json',
    });
  });

  it('turns a json_schema response format into the schema', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const out = toOllamaRequest(
      { messages: [], response_format: { type: 'json_schema', json_schema: { name: 's', schema } } },
      'm',
      provider,
      true,
    );
    expect(out.format).toEqual(schema);
  });

  it('translates text + image parts, tool calls, tool results and tools', () => {
    const tools = [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }];
    const out = toOllamaRequest(
      {
        messages: [
          { role: 'system', content: 'be brief' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            ],
          },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Berlin"}' } }],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
        ],
        tools,
      },
      'llava',
      provider,
      true,
    );
    expect(out.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'what is this?', images: ['iVBORw0KGgo='] },
      { role: 'assistant', content: '', tool_calls: [{ function: { name: 'weather', arguments: { city: 'Berlin' } } }] },
      { role: 'tool', content: '{"temp":21}', tool_name: 'weather' },
    ]);
    expect(out.tools).toBe(tools);
  });

  it('refuses remote image URLs (Ollama cannot fetch them), so another target can take the request', () => {
    expect(() =>
      toOllamaRequest(
        { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] },
        'm',
        provider,
        false,
      ),
    ).toThrow(UnsupportedRequestError);
  });
});
