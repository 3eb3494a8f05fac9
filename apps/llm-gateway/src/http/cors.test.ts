import { describe, expect, it } from 'vitest';
import { normalizeOrigin } from './cors.js';

describe('normalizeOrigin', () => {
  it('keeps scheme, host and a non-default port, lowercased, as browsers send Origin', () => {
    expect(normalizeOrigin('https://app.example.com')).toBe('https://app.example.com');
    expect(normalizeOrigin(' HTTP://LocalHost:5173/ ')).toBe('http://localhost:5173');
    expect(normalizeOrigin('https://a.example:443')).toBe('https://a.example');
    expect(normalizeOrigin('*')).toBe('*');
  });

  it('refuses anything that is not exactly an origin', () => {
    for (const text of ['a.example', 'https://a.example/x', 'https://a.example/?q', 'https://a.example#f', 'https://u@a.example', 'file:///x', '']) {
      expect(normalizeOrigin(text), text).toBeUndefined();
    }
  });
});
