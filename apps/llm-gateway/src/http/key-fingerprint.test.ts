import { describe, expect, it } from 'vitest';
import type { IncomingMessage } from 'node:http';
import { presentedKeyFingerprint } from './admin-auth.js';
import { KeyChecker } from './auth.js';
import { fingerprintOfAuthorization, fingerprintOfKey } from './key-fingerprint.js';

function requestWith(headers: Record<string, string>): IncomingMessage {
  return { headers } as unknown as IncomingMessage;
}

describe('key fingerprints', () => {
  it('are k: and 12 hex chars of the key\'s SHA-256, never the key', () => {
    expect(fingerprintOfKey('sk-test-123')).toBe('k:e0dbaa0c6455');
    expect(fingerprintOfKey('sk-test-124')).not.toBe(fingerprintOfKey('sk-test-123'));
  });

  it('are the same for a key in a usage record and in an admin write log', () => {
    const usage = fingerprintOfAuthorization('Bearer sk-test-123');
    expect(usage).toBe('k:e0dbaa0c6455');
    expect(presentedKeyFingerprint(requestWith({ authorization: 'Bearer sk-test-123' }))).toBe(usage);
    expect(presentedKeyFingerprint(requestWith({ 'x-api-key': 'sk-test-123' }))).toBe(usage);
  });

  it('attribute every request the API-key check admits to its key, however it spells "Bearer"', () => {
    const checker = KeyChecker.ofKeys(['sk-test-123']);
    for (const header of ['bearer sk-test-123', 'BEARER sk-test-123', '  Bearer   sk-test-123  ']) {
      expect(checker.check(header)).toEqual({ id: 'env-1', name: 'env-1' });
      expect(fingerprintOfAuthorization(header)).toBe('k:e0dbaa0c6455');
    }
  });

  it('are absent for a request without a bearer key', () => {
    expect(fingerprintOfAuthorization(undefined)).toBeNull();
    expect(fingerprintOfAuthorization('Basic c2stdGVzdA==')).toBeNull();
    expect(fingerprintOfAuthorization('Bearer   ')).toBeNull();
    expect(presentedKeyFingerprint(requestWith({}))).toBe('none');
  });

  it('stay right for every key after more distinct keys than are remembered', () => {
    for (let i = 0; i < 2_500; i++) expect(fingerprintOfAuthorization(`Bearer key-${i}`)).toBe(fingerprintOfKey(`key-${i}`));
    expect(fingerprintOfAuthorization('Bearer sk-test-123')).toBe('k:e0dbaa0c6455');
  });
});
