import { describe, expect, it } from 'vitest';
import { redactSecrets } from './redact.js';

describe('redactSecrets', () => {
  it('removes known keys, bearer tokens and key= parameters', () => {
    expect(redactSecrets('401 for sk-abcdef123', ['sk-abcdef123'])).toBe('401 for [redacted]');
    expect(redactSecrets('Authorization: Bearer abc.def-123')).toBe('Authorization: Bearer [redacted]');
    expect(redactSecrets('GET /models?key=AIzaSecret&alt=json')).toBe('GET /models?key=[redacted]&alt=json');
    expect(redactSecrets('api_key=xyz failed')).toBe('api_key=[redacted] failed');
  });

  it('leaves ordinary text and very short "keys" alone, and caps the length', () => {
    expect(redactSecrets('connect ECONNREFUSED 127.0.0.1:11434', ['abc'])).toBe('connect ECONNREFUSED 127.0.0.1:11434');
    expect(redactSecrets('x'.repeat(600))).toHaveLength(501);
  });
});
