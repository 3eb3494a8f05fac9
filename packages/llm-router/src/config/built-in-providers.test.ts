import { PROVIDER_PREFIXES, RAW_MODEL_PATTERN } from '@mana/llm-aliases';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_PROVIDERS } from './built-in-providers.js';

describe('built-in providers and the lint gate', () => {
  it('every built-in provider is a prefix the lint gate flags in product code', () => {
    // Otherwise `anthropic/claude-…` could be written in product code unnoticed (see docs/lint-gate.md).
    expect(PROVIDER_PREFIXES).toEqual(expect.arrayContaining(Object.keys(BUILT_IN_PROVIDERS)));
    for (const name of Object.keys(BUILT_IN_PROVIDERS)) expect(RAW_MODEL_PATTERN.test(`${name}/some-model`)).toBe(true);
  });
});
