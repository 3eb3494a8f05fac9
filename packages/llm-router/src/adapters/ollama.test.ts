import { startFakeOllama, type FakeUpstream } from '@mana/llm-testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load-config.js';
import { otherAliases } from '../config/test-configs.js';
import { createRouter, type Router } from '../router.js';
import type { JsonResult, StreamResult } from '../types.js';

let ollama: FakeUpstream;
let router: Router;

beforeAll(async () => {
  ollama = await startFakeOllama({ host: '127.0.0.1' });
  const config = parseConfig(
    `providers:
  ollama: { type: ollama, base_url: "${ollama.url}", options: { num_ctx: 8192 } }
aliases:
  mana/vision: [ollama/llava:13b]
${otherAliases('mana/vision')}`,
    { env: {} },
  );
  router = createRouter({ config });
});
afterAll(async () => {
  await router.close();
  await ollama.close();
});
afterEach(() => ollama.reset());

const messages = [
  {
    role: 'user',
    content: [
      { type: 'text', text: 'describe' },
      { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
    ],
  },
];
const tools = [{ type: 'function', function: { name: 'lookup', description: 'd', parameters: { type: 'object', properties: {} } } }];

describe('Ollama through the router', () => {
  it('non-streaming: sends images, tools and options natively; answers OpenAI-shaped with usage', async () => {
    ollama.on('llava:13b', { kind: 'answer', content: 'a cat', usage: { prompt_tokens: 30, completion_tokens: 3 } });
    const result = (await router.execute({ model: 'mana/vision', body: { messages, tools, max_tokens: 20 }, stream: false })) as JsonResult;
    expect(result.kind).toBe('json');
    const sent = ollama.requests[0]!;
    expect(sent.path).toBe('/api/chat');
    expect(sent.body).toMatchObject({
      model: 'llava:13b',
      stream: false,
      messages: [{ role: 'user', content: 'describe', images: ['/9j/4AAQ'] }],
      tools,
      options: { num_ctx: 8192, num_predict: 20 },
    });
    expect(result.body).toMatchObject({
      object: 'chat.completion',
      model: 'llava:13b',
      choices: [{ index: 0, message: { role: 'assistant', content: 'a cat' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 30, completion_tokens: 3, total_tokens: 33 },
    });
    expect(result.usage).toEqual({ prompt_tokens: 30, completion_tokens: 3, total_tokens: 33 });
  });

  it('non-streaming tool calls come back as OpenAI tool_calls with JSON string arguments', async () => {
    ollama.on('llava:13b', { kind: 'answer', toolCalls: [{ function: { name: 'lookup', arguments: { q: 'x' } } }] });
    const result = (await router.execute({ model: 'mana/vision', body: { messages, tools }, stream: false })) as JsonResult;
    expect(result.body).toMatchObject({
      choices: [
        {
          finish_reason: 'tool_calls',
          message: { content: null, tool_calls: [{ type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }] },
        },
      ],
    });
  });

  it('streaming: NDJSON becomes chat.completion.chunk events with text, tool calls and final usage', async () => {
    ollama.on('llava:13b', {
      kind: 'answer',
      content: 'one two',
      chunks: 2,
      toolCalls: [{ function: { name: 'lookup', arguments: { q: 'y' } } }],
      usage: { prompt_tokens: 7, completion_tokens: 4 },
    });
    const result = (await router.execute({ model: 'mana/vision', body: { messages, tools, stream: true }, stream: true })) as StreamResult;
    expect(result.kind).toBe('stream');
    interface Chunk {
      object: string;
      choices: { delta: { role?: string; content?: string; tool_calls?: unknown[] }; finish_reason: string | null }[];
      usage?: unknown;
    }
    const chunks: Chunk[] = [];
    for await (const data of result.events) chunks.push(JSON.parse(data) as Chunk);
    expect(ollama.requests[0]!.body).toMatchObject({ stream: true });
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('one two');
    const call = chunks.find((c) => c.choices[0]?.delta.tool_calls)?.choices[0]?.delta.tool_calls?.[0];
    expect(call).toMatchObject({ index: 0, type: 'function', function: { name: 'lookup', arguments: '{"q":"y"}' } });
    const last = chunks.at(-1);
    expect(last?.choices[0]?.finish_reason).toBe('tool_calls');
    expect(last?.usage).toEqual({ prompt_tokens: 7, completion_tokens: 4, total_tokens: 11 });
    expect(result.usage).toEqual({ prompt_tokens: 7, completion_tokens: 4, total_tokens: 11 });
  });

  it('listModels reads /api/tags for the probe', async () => {
    const state = () => router.aliases().find((a) => a.alias === 'mana/vision')?.chain[0]?.state;
    ollama.setModels(['llava:13b', 'gemma3:4b']);
    await router.probeNow();
    expect(ollama.probeCount()).toBeGreaterThanOrEqual(1);
    expect(state()).toBe('healthy');
    ollama.setModels(['gemma3:4b']);
    await router.probeNow();
    expect(state()).toBe('model_missing');
    await expect(router.execute({ model: 'mana/vision', body: { messages }, stream: false })).rejects.toMatchObject({
      code: 'no_healthy_provider',
    });
    expect(ollama.count()).toBe(0);
    ollama.setModels(['llava:13b']);
    await router.probeNow();
    expect(state()).toBe('healthy');
  });
  it('a model the server has not pulled (404) counts as a failure of that target', async () => {
    ollama.on('llava:13b', { kind: 'status', status: 404 });
    await expect(router.execute({ model: 'mana/vision', body: { messages }, stream: false })).rejects.toMatchObject({
      code: 'upstream_failed',
    });
  });

});
