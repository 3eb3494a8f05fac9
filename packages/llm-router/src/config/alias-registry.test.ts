import { DEFAULT_ALIAS, MANA_LLM } from '@mana/llm-aliases';
import { describe, expect, it } from 'vitest';
import type { RouterError } from '../errors.js';
import { listModels, resolveModel } from './alias-registry.js';
import { parseConfig } from './load-config.js';
import { STRINGS_ONLY } from './test-configs.js';

const snapshot = parseConfig(
  `providers:\n  local: { type: openai, base_url: http://127.0.0.1:8000/v1, api_key_required: false, settings: { retries: 2 } }\n${STRINGS_ONLY}`,
  { env: {} },
);

describe('resolveModel', () => {
  it('resolves an alias to its chain', () => {
    const resolution = resolveModel(snapshot, MANA_LLM.LONG_FORM);
    expect(resolution.alias).toBe('mana/long-form');
    expect(resolution.config).toBe(snapshot.aliases.get('mana/long-form'));
  });

  it('uses DEFAULT_ALIAS when no model is named', () => {
    expect(resolveModel(snapshot, undefined).alias).toBe(DEFAULT_ALIAS);
  });

  it('accepts a direct provider/model as a one-target failover chain', () => {
    const resolution = resolveModel(snapshot, 'openrouter/anthropic/claude-3.5-haiku');
    expect(resolution.alias).toBeUndefined();
    expect(resolution.config.strategy).toBe('failover');
    expect(resolution.config.chain).toEqual([
      expect.objectContaining({ id: 'openrouter/anthropic/claude-3.5-haiku', provider: 'openrouter', model: 'anthropic/claude-3.5-haiku', weight: 1 }),
    ]);
  });

  it('gives a direct target of a configured provider that provider’s settings', () => {
    const target = resolveModel(snapshot, 'local/qwen2.5').config.chain[0];
    expect(target?.settings.retries).toBe(2);
  });

  it.each(['gpt-4o', 'mana/unknown', 'nope/model', 'groq/', ''])('rejects %j as unknown_model listing the aliases', (model) => {
    let error: RouterError | undefined;
    try {
      resolveModel(snapshot, model);
    } catch (caught) {
      error = caught as RouterError;
    }
    expect(error?.code).toBe('unknown_model');
    expect(error?.knownAliases).toEqual([...snapshot.aliases.keys()]);
    expect(error?.message).toContain('mana/fast-text, mana/long-form, mana/structured, mana/reasoning, mana/vision');
  });
});

describe('listModels', () => {
  it('lists aliases, then direct targets once each', () => {
    const models = listModels(snapshot);
    expect(models.slice(0, 6)).toEqual(['mana/fast-text', 'mana/long-form', 'mana/structured', 'mana/reasoning', 'mana/vision', 'mana/embed']);
    expect(models.slice(6)).toEqual([
      'ollama/gemma3:4b',
      'groq/llama-3.1-8b-instant',
      'ollama/gemma3:12b',
      'groq/llama-3.3-70b-versatile',
      'openrouter/anthropic/claude-3.5-haiku',
      'ollama/qwen2.5:7b',
      'groq/deepseek-r1-distill-llama-70b',
      'openrouter/deepseek/deepseek-r1',
      'ollama/llava:13b',
      'google/gemini-2.0-flash',
      'ollama/nomic-embed-text',
    ]);
  });
});
