import { describe, expect, it } from 'vitest';
import { redactSecrets, redactUrl, scrubErrorBody } from './redact.js';

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

const KEY = 'sk-hoai/SECRET-1234567890';

describe('scrubErrorBody', () => {
  it('takes the key out of every string of a JSON body, however the upstream escaped it, and re-encodes it', () => {
    const unicode = '{"error":{"message":"bad key Bearer sk\\u002dhoai\\u002FSECRET-1234567890","type":"invalid_request_error"}}';
    const php = '{"error":{"message":"bad key sk-hoai\\/SECRET-1234567890"},"sk\\u002dhoai/SECRET-1234567890":1}';
    for (const body of [unicode, php]) {
      const out = scrubErrorBody(body, [KEY]);
      expect(JSON.stringify(JSON.parse(out))).not.toContain('SECRET');
      expect(out).not.toContain('SECRET');
    }
    expect(JSON.parse(scrubErrorBody(unicode, [KEY]))).toEqual({ error: { message: 'bad key Bearer [redacted]', type: 'invalid_request_error' } });
  });

  it('scrubs a body that is not JSON for every escape form of every character, in any mix', () => {
    const escaped = [...KEY].map((ch, i) => (i % 2 === 0 ? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}` : ch === '/' ? '\\/' : ch)).join('');
    expect(scrubErrorBody(`<html>oops ${escaped} and ${KEY} {"cut`, [KEY])).toBe('<html>oops [redacted] and [redacted] {"cut');
    expect(scrubErrorBody(`{"error":"sk-hoai\\/SECRET-1234567890`, [KEY])).toBe('{"error":"[redacted]');
  });

  it('leaves a body without the key byte for byte as it came', () => {
    const body = '{ "error" : { "message" : "caf\\u00e9 is not a model" } }';
    expect(scrubErrorBody(body, [KEY])).toBe(body);
    expect(scrubErrorBody('x'.repeat(10), ['abc'])).toBe('x'.repeat(10));
  });

  it('survives nesting too deep to walk', () => {
    const deep = `${'['.repeat(200_000)}"${KEY}"${']'.repeat(200_000)}`;
    expect(scrubErrorBody(deep, [KEY])).not.toContain('SECRET');
  });
});

describe('redactSecrets with escaped keys', () => {
  it('takes out a key written with JSON escapes (what /v1/health shows)', () => {
    expect(redactSecrets('401: {"message":"sk\\u002dhoai\\/SECRET-1234567890"}', [KEY])).toBe('401: {"message":"[redacted]"}');
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
