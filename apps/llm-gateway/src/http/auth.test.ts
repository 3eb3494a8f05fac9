import { describe, expect, it } from 'vitest';
import { Socket } from 'node:net';
import { keyDigest, StaticKeys, type ApiCaller, type CallerSource } from './api-caller.js';
import { KeyChecker, bearerToken } from './auth.js';

describe('KeyChecker', () => {
  it('names the caller of each configured key by its place in MANA_LLM_API_KEYS, and tells missing from wrong', () => {
    const keys = KeyChecker.ofKeys(['alpha', 'beta-longer-key']);
    expect(keys.enabled).toBe(true);
    expect(keys.check('Bearer alpha')).toEqual({ id: 'env-1', name: 'env-1' });
    expect(keys.check('bearer beta-longer-key')).toEqual({ id: 'env-2', name: 'env-2' });
    expect(keys.check('Bearer alph')).toBe('invalid');
    expect(keys.check('Bearer alphaa')).toBe('invalid');
    expect(keys.check('Basic alpha')).toBe('missing');
    expect(keys.check(undefined)).toBe('missing');
    expect(KeyChecker.ofKeys([]).enabled).toBe(false);
  });
  it('names a key listed twice by its first place', () => {
    expect(KeyChecker.ofKeys(['same', 'other', 'same']).check('Bearer same')).toEqual({ id: 'env-1', name: 'env-1' });
  });
  it('never puts the key into the caller', () => {
    const caller = KeyChecker.ofKeys(['sk-secret-value']).check('Bearer sk-secret-value');
    expect(JSON.stringify(caller)).not.toContain('sk-secret-value');
  });
  it('extracts the bearer token', () => {
    expect(bearerToken('Bearer  tok ')).toBe('tok');
    expect(bearerToken('Bearer')).toBeUndefined();
    expect(bearerToken('Bearer a b')).toBeUndefined();
  });
});

describe('KeyChecker per connection', () => {
  it('remembers an accepted header per socket with its caller, and only that exact value', () => {
    const keys = KeyChecker.ofKeys(['alpha', 'beta']);
    const a = new Socket();
    const b = new Socket();
    const first = keys.check('Bearer alpha', a);
    expect(first).toEqual({ id: 'env-1', name: 'env-1' });
    // The same caller object again, from the memo.
    expect(keys.check('Bearer alpha', a)).toBe(first);
    expect(keys.check('Bearer alphx', a)).toBe('invalid');
    expect(keys.check(undefined, a)).toBe('missing');
    expect(keys.check('Bearer beta', a)).toEqual({ id: 'env-2', name: 'env-2' });
    expect(keys.check('Bearer beta', a)).toEqual({ id: 'env-2', name: 'env-2' });
    expect(keys.check('Bearer alpha', a)).toBe(first);
    // Another connection, and another checker, start from scratch.
    expect(keys.check('Bearer nope', b)).toBe('invalid');
    expect(KeyChecker.ofKeys(['other']).check('Bearer alpha', a)).toBe('invalid');
  });
});

/** A source whose keys change at runtime: what a store of service keys looks like to the checker. */
class ChangingKeys implements CallerSource {
  epoch = 0;
  private readonly byDigest = new Map<string, ApiCaller>();
  get hasKeys(): boolean {
    return this.byDigest.size > 0;
  }
  add(key: string, caller: ApiCaller): void {
    this.byDigest.set(keyDigest(key).toString('hex'), caller);
    this.epoch++;
  }
  remove(key: string): void {
    this.byDigest.delete(keyDigest(key).toString('hex'));
    this.epoch++;
  }
  callerOf(digest: Buffer): ApiCaller | undefined {
    return this.byDigest.get(digest.toString('hex'));
  }
}

describe('KeyChecker over several sources', () => {
  it('asks each source, is on while any holds a key, and forgets a remembered connection once a key is removed', () => {
    const changing = new ChangingKeys();
    const keys = new KeyChecker([new StaticKeys([]), changing]);
    expect(keys.enabled).toBe(false);
    const mana = { id: 'key_01', name: 'mana-api' };
    changing.add('mk-secret', mana);
    expect(keys.enabled).toBe(true);
    const socket = new Socket();
    expect(keys.check('Bearer mk-secret', socket)).toBe(mana);
    expect(keys.check('Bearer mk-secret', socket)).toBe(mana);
    changing.remove('mk-secret');
    // The open connection is checked again: a revoked key stops at once.
    expect(keys.check('Bearer mk-secret', socket)).toBe('invalid');
  });
  it('names the static caller first when both sources know a key', () => {
    const changing = new ChangingKeys();
    changing.add('shared', { id: 'key_02', name: 'svc' });
    expect(new KeyChecker([new StaticKeys(['shared']), changing]).check('Bearer shared')).toEqual({ id: 'env-1', name: 'env-1' });
  });
  it('required: on while no source holds a key (every key refused), and still on after the last is removed', () => {
    const changing = new ChangingKeys();
    const keys = new KeyChecker([new StaticKeys([]), changing], { required: true });
    expect(keys.enabled).toBe(true);
    expect(keys.check(undefined)).toBe('missing');
    expect(keys.check('Bearer anything')).toBe('invalid');
    const mana = { id: 'key_03', name: 'mana-api' };
    changing.add('mk-secret', mana);
    expect(keys.check('Bearer mk-secret')).toBe(mana);
    changing.remove('mk-secret');
    expect(keys.enabled).toBe(true);
    expect(keys.check('Bearer mk-secret')).toBe('invalid');
  });
});
