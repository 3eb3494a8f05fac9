import { describe, expect, it } from 'vitest';
import { aliasSuggestionIndex } from './index.js';

describe('aliasSuggestionIndex', () => {
  it('maps each chain member to the alias where it comes earliest', () => {
    const index = aliasSuggestionIndex({
      aliases: {
        'mana/fast-text': { chain: ['ollama/gemma3:4b', 'groq/llama-3.1-8b-instant'] },
        'mana/structured': { chain: ['groq/llama-3.1-8b-instant', 'ollama/qwen2.5:7b'] },
        'mana/long-form': {
          chain: ['ollama/gemma3:12b', { target: 'openrouter/anthropic/claude-3.5-haiku', weight: 2 }],
        },
      },
    });
    expect(index.get('ollama/gemma3:4b')).toEqual({ alias: 'mana/fast-text', key: 'FAST_TEXT' });
    expect(index.get('groq/llama-3.1-8b-instant')).toEqual({ alias: 'mana/structured', key: 'STRUCTURED' });
    expect(index.get('openrouter/anthropic/claude-3.5-haiku')).toEqual({ alias: 'mana/long-form', key: 'LONG_FORM' });
    expect(index.get('ollama/unknown')).toBeUndefined();
  });

  it('breaks ties by the order of the aliases in the file', () => {
    const index = aliasSuggestionIndex({
      aliases: {
        'mana/fast-text': { chain: ['ollama/gemma3:4b', 'groq/llama-3.1-8b-instant'] },
        'mana/structured': { chain: ['ollama/qwen2.5:7b', 'groq/llama-3.1-8b-instant'] },
      },
    });
    expect(index.get('groq/llama-3.1-8b-instant')?.key).toBe('FAST_TEXT');
  });

  it('skips aliases outside MANA_LLM and malformed entries', () => {
    const index = aliasSuggestionIndex({
      aliases: { 'mana/experiment': { chain: ['together/x'] }, 'mana/vision': { chain: [42, { weight: 1 }] }, 'mana/fast-text': null },
    });
    expect(index.size).toBe(0);
  });

  it('throws when there is no aliases map', () => {
    expect(() => aliasSuggestionIndex(null)).toThrow(/no "aliases" map/);
    expect(() => aliasSuggestionIndex({ aliases: ['x'] })).toThrow(TypeError);
  });
});
