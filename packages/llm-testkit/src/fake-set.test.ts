import { describe, expect, test } from 'vitest';
import { closeFakes, providersYaml, startFakes } from './fake-set.js';

describe('a set of fakes', () => {
  test('starts one fake per entry in its dialect, named for its key, writes their provider lines and closes them all', async () => {
    const fakes = await startFakes({ cloud: 'openai', node: 'ollama' });
    try {
      expect([fakes.cloud.kind, fakes.node.kind]).toEqual(['openai', 'ollama']);
      const res = await fetch(`${fakes.cloud.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe('Hello from m via cloud');
      expect(providersYaml(fakes)).toBe(
        `  cloud: { type: openai, base_url: "http://127.0.0.1:${fakes.cloud.port}/v1", api_key_required: false }\n` +
          `  node: { type: ollama, base_url: "http://127.0.0.1:${fakes.node.port}", api_key_required: false }\n`,
      );
    } finally {
      await closeFakes(fakes);
    }
    await expect(fetch(fakes.node.url)).rejects.toThrow();
  });
});
