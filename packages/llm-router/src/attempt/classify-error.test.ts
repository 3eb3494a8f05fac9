import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InvalidResponseError, UnsupportedRequestError, type HttpFailure } from '../adapters/adapter.js';
import { DEFAULT_SETTINGS } from '../config/defaults.js';
import type { Settings } from '../types.js';
import { classifyFailure, classifyStreamBreak, MAX_UPSTREAM_DELAY_MS, parseRetryAfter } from './classify-error.js';

const settings: Settings = DEFAULT_SETTINGS;
const now = 1_000_000;
const ctx = { aliasTarget: true, failOverOnContextLength: true, settings, now };

function http(status: number, headers: Record<string, string> = {}): HttpFailure {
  return { ok: false, status, body: '{"error":"x"}', contentType: 'application/json', headers };
}
const netError = (code: string) => Object.assign(new Error('boom'), { code });

describe('classifyFailure', () => {
  it.each([
    ['ECONNREFUSED', 'connect_refused'],
    ['ECONNRESET', 'connect_reset'],
    ['ENOTFOUND', 'dns'],
    ['UND_ERR_CONNECT_TIMEOUT', 'connect_timeout'],
    ['UND_ERR_SOCKET', 'socket_closed'],
  ])('%s → fail over as %s and count against the provider', (code, reason) => {
    const d = classifyFailure({ kind: 'error', error: netError(code) }, ctx);
    expect(d).toMatchObject({ action: 'fail_over', reason, providerFailure: true, probeProvider: false, coolDownUntil: undefined });
  });

  it.each([
    ['UND_ERR_HEADERS_TIMEOUT'],
    ['UND_ERR_BODY_TIMEOUT'],
    ['first_byte_timeout'], // attempt/first-byte-timer.ts
  ])('%s → fail over as first_byte_timeout; the provider is probed rather than counted as failed, and never retried', (code) => {
    const d = classifyFailure({ kind: 'error', error: netError(code) }, ctx);
    expect(d).toMatchObject({ action: 'fail_over', reason: 'first_byte_timeout', providerFailure: false, probeProvider: true, retryable: false });
  });

  it('finds the code inside an AggregateError', () => {
    const error = new AggregateError([netError('ECONNREFUSED')], 'x');
    expect(classifyFailure({ kind: 'error', error }, ctx).reason).toBe('connect_refused');
  });

  it('5xx fails over and cools the target for rate_limit_cooldown', () => {
    const d = classifyFailure({ kind: 'http', response: http(503) }, ctx);
    expect(d).toMatchObject({ action: 'fail_over', reason: 'http_503', status: 503, coolDownUntil: now + 15_000 });
    expect(d.detail).toBe('503 Service Unavailable');
    expect(d.providerFailure).toBe(false);
  });

  it('429 honours Retry-After seconds and HTTP-dates', () => {
    expect(classifyFailure({ kind: 'http', response: http(429, { 'retry-after': '7' }) }, ctx)).toMatchObject({
      action: 'fail_over',
      coolDownUntil: now + 7_000,
      retryAfterMs: 7_000,
    });
    const date = new Date(now + 20_000).toUTCString();
    expect(classifyFailure({ kind: 'http', response: http(429, { 'retry-after': date }) }, ctx).coolDownUntil).toBe(
      now + 20_000,
    );
    expect(classifyFailure({ kind: 'http', response: http(429) }, ctx).coolDownUntil).toBe(now + 15_000);
  });

  it.each([401, 402, 403, 404])('%i on an alias target fails over and cools the target', (status) => {
    const d = classifyFailure({ kind: 'http', response: http(status) }, ctx);
    expect(d).toMatchObject({ action: 'fail_over', coolDownUntil: now + 60_000, retryable: false });
  });

  it.each([400, 413, 422])('%i rejects: no failover', (status) => {
    expect(classifyFailure({ kind: 'http', response: http(status) }, ctx)).toMatchObject({
      action: 'reject',
      reason: `http_${status}`,
      status,
    });
  });

  it('404 on a direct target is relayed', () => {
    expect(classifyFailure({ kind: 'http', response: http(404) }, { ...ctx, aliasTarget: false }).action).toBe('reject');
  });

  it('empty answers, error events and malformed data fail over without touching health', () => {
    for (const failure of [
      { kind: 'empty', reason: 'empty_response' } as const,
      { kind: 'stream_error', message: 'x' } as const,
      { kind: 'error', error: new InvalidResponseError('bad') } as const,
    ]) {
      const d = classifyFailure(failure, ctx);
      expect(d.action).toBe('fail_over');
      expect(d.providerFailure).toBe(false);
      expect(d.coolDownUntil).toBeUndefined();
    }
  });

  it('an untranslatable request fails over without a network call', () => {
    const d = classifyFailure({ kind: 'error', error: new UnsupportedRequestError('remote image') }, ctx);
    expect(d).toMatchObject({ action: 'fail_over', reason: 'unsupported_request', reachedNetwork: false });
  });
});

describe('parseRetryAfter', () => {
  it('parses seconds, dates, and ignores junk', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter(' 3 ', now)).toBe(3_000);
    expect(parseRetryAfter(new Date(now - 5_000).toUTCString(), now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('clamps absurd values to MAX_UPSTREAM_DELAY_MS and ignores negative or non-numbers', () => {
    const realNow = Date.now();
    expect(MAX_UPSTREAM_DELAY_MS).toBe(3_600_000);
    expect(parseRetryAfter('10000000000000', realNow)).toBe(MAX_UPSTREAM_DELAY_MS);
    expect(parseRetryAfter('9'.repeat(400), realNow)).toBe(MAX_UPSTREAM_DELAY_MS); // Infinity seconds
    expect(parseRetryAfter('Fri, 31 Dec 9999 23:59:59 GMT', realNow)).toBe(MAX_UPSTREAM_DELAY_MS);
    expect(parseRetryAfter('1.5', realNow)).toBe(1_500);
    expect(parseRetryAfter('-5', realNow)).toBeUndefined();
    expect(parseRetryAfter('NaN', realNow)).toBeUndefined();
    expect(parseRetryAfter('Infinity', realNow)).toBeUndefined();
  });

  it('a cooldown from an absurd Retry-After is a valid date, at most an hour away', () => {
    const realNow = Date.now();
    const d = classifyFailure({ kind: 'http', response: http(429, { 'retry-after': '10000000000000' }) }, { ...ctx, now: realNow });
    expect(d.coolDownUntil).toBe(realNow + MAX_UPSTREAM_DELAY_MS);
    expect(new Date(d.coolDownUntil!).toISOString()).toMatch(/^\d{4}-/);
  });
});

describe('classifyStreamBreak', () => {
  it('names a committed stream’s transport error: malformed data, else a broken connection', () => {
    expect(classifyStreamBreak(Object.assign(new Error('bad json'), { code: 'invalid_response' }))).toBe('invalid_response');
    expect(classifyStreamBreak(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }))).toBe('socket_closed');
    expect(classifyStreamBreak(new Error('boom'))).toBe('socket_closed');
    expect(classifyStreamBreak(null)).toBe('socket_closed');
  });
});

describe('context-length answers (recorded bodies: fixtures/context-length-errors.json)', () => {
  const fixtures = JSON.parse(readFileSync(new URL('./fixtures/context-length-errors.json', import.meta.url), 'utf8')) as {
    contextLength: { provider: string; status: number; body: string }[];
    otherErrors: { provider: string; status: number; body: string }[];
  };
  const answer = (status: number, body: string): HttpFailure => ({ ok: false, status, body, contentType: 'application/json', headers: {} });

  it.each(fixtures.contextLength.map((f) => [f.provider, f.status, f.body] as const))(
    '%s %i fails over as context_length, without cooling the target down',
    (_provider, status, body) => {
      const d = classifyFailure({ kind: 'http', response: answer(status, body) }, ctx);
      expect(d).toMatchObject({ action: 'fail_over', reason: 'context_length', status, coolDownUntil: undefined, providerFailure: false, retryable: false });
    },
  );

  it.each(fixtures.otherErrors.map((f) => [f.provider, f.status, f.body] as const))('%s %i is still relayed as it is', (_provider, status, body) => {
    const d = classifyFailure({ kind: 'http', response: answer(status, body) }, ctx);
    expect(d).toMatchObject({ action: 'reject', reason: `http_${status}` });
  });

  it('fail_over_on_context_length: false relays the 400 instead', () => {
    const body = fixtures.contextLength[0]!.body;
    const d = classifyFailure({ kind: 'http', response: answer(400, body) }, { ...ctx, failOverOnContextLength: false });
    expect(d).toMatchObject({ action: 'reject', reason: 'http_400' });
  });

  it('with fail_over_on_context_length: false a context 500 is an ordinary 5xx (cooled down like any other)', () => {
    const d = classifyFailure({ kind: 'http', response: answer(500, fixtures.contextLength[2]!.body) }, { ...ctx, failOverOnContextLength: false });
    expect(d).toMatchObject({ action: 'fail_over', reason: 'http_500', coolDownUntil: now + 15_000 });
  });
});
