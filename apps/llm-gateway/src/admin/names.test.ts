import { describe, expect, it } from 'vitest';
import { isAdminFailure } from './admin-failure.js';
import { nameFromPath } from './names.js';

function refusal(raw: string, kind: 'alias' | 'provider' = 'alias'): string | undefined {
  try {
    nameFromPath(raw, kind);
    return undefined;
  } catch (error) {
    if (!isAdminFailure(error)) throw error;
    return error.error.code;
  }
}

describe('nameFromPath', () => {
  it('keeps the real slash of alias names and decodes percent-escapes', () => {
    expect(nameFromPath('mana/long-form', 'alias')).toBe('mana/long-form');
    expect(nameFromPath('gpt-4o', 'alias')).toBe('gpt-4o');
    expect(nameFromPath('team%2Dx', 'alias')).toBe('team-x');
    expect(nameFromPath('local-vllm', 'provider')).toBe('local-vllm');
  });

  it.each([
    ['mana%2Fx'],
    ['mana%2fx'],
    ['mana/../x'],
    ['./x'],
    ['mana/x%00'],
    ['mana/x%0A'],
    ['x'.repeat(201)],
    ['x'.repeat(10 * 1024)],
    ['%E0%A4%A'],
    [''],
    ['mana/Upper'],
    ['a b'],
  ])('refuses %j with invalid_name', (raw) => {
    expect(refusal(raw)).toBe('invalid_name');
  });

  it('provider names: lowercase slug, never "mana", no slash', () => {
    expect(refusal('mana', 'provider')).toBe('invalid_name');
    expect(refusal('a/b', 'provider')).toBe('invalid_name');
    expect(refusal('Groq', 'provider')).toBe('invalid_name');
  });
});
