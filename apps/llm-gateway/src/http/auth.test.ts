import { describe, expect, it } from 'vitest';
import { Socket } from 'node:net';
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

describe('KeyChecker per connection', () => {
  it('remembers an accepted header per socket, and only that exact value', () => {
    const keys = new KeyChecker(['alpha']);
    const a = new Socket();
    const b = new Socket();
    expect(keys.check('Bearer alpha', a)).toBe('ok');
    expect(keys.check('Bearer alpha', a)).toBe('ok');
    expect(keys.check('Bearer alphx', a)).toBe('invalid');
    expect(keys.check(undefined, a)).toBe('missing');
    expect(keys.check('Bearer alpha', a)).toBe('ok');
    // Another connection, and another checker, start from scratch.
    expect(keys.check('Bearer nope', b)).toBe('invalid');
    expect(new KeyChecker(['other']).check('Bearer alpha', a)).toBe('invalid');
  });
});
