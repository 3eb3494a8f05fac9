import { describe, expect, it } from 'vitest';
import { KeyChecker, bearerToken } from './auth.js';

describe('KeyChecker', () => {
  it('accepts any configured key and tells missing from wrong', () => {
    const keys = new KeyChecker(['alpha', 'beta-longer-key']);
    expect(keys.enabled).toBe(true);
    expect(keys.check('Bearer alpha')).toBe('ok');
    expect(keys.check('bearer beta-longer-key')).toBe('ok');
    expect(keys.check('Bearer alph')).toBe('invalid');
    expect(keys.check('Bearer alphaa')).toBe('invalid');
    expect(keys.check('Basic alpha')).toBe('missing');
    expect(keys.check(undefined)).toBe('missing');
    expect(new KeyChecker([]).enabled).toBe(false);
  });
  it('extracts the bearer token', () => {
    expect(bearerToken('Bearer  tok ')).toBe('tok');
    expect(bearerToken('Bearer')).toBeUndefined();
    expect(bearerToken('Bearer a b')).toBeUndefined();
  });
});
