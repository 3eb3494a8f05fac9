import { describe, expect, it } from 'vitest';
import { redactSecrets, redactUrl } from './redact.js';

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

describe('redactUrl', () => {
  it('hides every query value and the user info, keeping names, host and path', () => {
    expect(redactUrl('https://x.openai.azure.com/openai/v1?api-version=2024-10-21&api_key=sk-1')).toBe(
      'https://x.openai.azure.com/openai/v1?api-version=<redacted>&api_key=<redacted>',
    );
    expect(redactUrl('http://user:pw@127.0.0.1:8000/v1?key')).toBe('http://<redacted>@127.0.0.1:8000/v1?<redacted>');
    expect(redactUrl('http://h/v1?a=1&&b=')).toBe('http://h/v1?a=<redacted>&&b=<redacted>');
    expect(redactUrl('http://h/v1#token')).toBe('http://h/v1#<redacted>');
  });

  it('works on the text as written and leaves a URL without secrets alone', () => {
    expect(redactUrl('${OLLAMA_URL:-http://localhost:11434}')).toBe('${OLLAMA_URL:-http://localhost:11434}');
    expect(redactUrl('http://h/v1?key=${KEY}')).toBe('http://h/v1?key=<redacted>');
    expect(redactUrl('https://api.groq.com/openai/v1')).toBe('https://api.groq.com/openai/v1');
    expect(redactUrl('http://h/path@with-at')).toBe('http://h/path@with-at');
  });
});
