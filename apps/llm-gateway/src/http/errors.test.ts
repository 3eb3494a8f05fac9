import { describe, expect, it } from 'vitest';
import { ATTEMPT_REASONS, RouterError, type Attempt, type RequestOutcome } from '@mana/llm-router';
import { readFileSync } from 'node:fs';
import { GATEWAY_ERRORS, errorBody, fromRouterError, gatewayError } from './errors.js';

const attempts: Attempt[] = [
  { target: 'local/m1', provider: 'local', model: 'm1', outcome: 'skipped', reason: 'unhealthy', durationMs: 0, failedOver: true },
  { target: 'cloud/m2', provider: 'cloud', model: 'm2', outcome: 'failed', reason: 'http_503', status: 503, durationMs: 12.345, failedOver: false, detail: '503 Service Unavailable' },
];
const outcome: RequestOutcome = { alias: 'mana/a', target: undefined, attempts, upstreamCalls: 1, retryAfterSeconds: 13 };

describe('error shaping', () => {
  it('is OpenAI-shaped with a stable code and the attempts', () => {
    const body = JSON.parse(errorBody(gatewayError('upstream_failed', 'All targets failed.', { outcome })));
    expect(body).toEqual({
      error: {
        message: 'All targets failed.',
        type: 'api_error',
        code: 'upstream_failed',
        param: null,
        attempts: [
          { target: 'local/m1', outcome: 'skipped', reason: 'unhealthy', duration_ms: 0, failed_over: true },
          { target: 'cloud/m2', outcome: 'failed', reason: 'http_503', status: 503, duration_ms: 12.3, failed_over: false, detail: '503 Service Unavailable' },
        ],
      },
    });
  });

  it('maps router errors to statuses and codes', () => {
    const unknown = fromRouterError(new RouterError('unknown_model', 'x', { knownAliases: ['mana/a', 'mana/b'] }), 'gpt-9');
    expect(unknown).toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });
    expect(unknown.message).toContain("'gpt-9'");
    expect(unknown.message).toContain('mana/a, mana/b');

    // The outcome travels unchanged: the router clamped Retry-After and counted the calls once.
    const none = fromRouterError(new RouterError('no_healthy_provider', 'none', { outcome }), 'mana/a');
    expect(none).toMatchObject({ status: 503, code: 'no_healthy_provider' });
    expect(none.outcome).toBe(outcome);

    expect(fromRouterError(new RouterError('upstream_failed', 'failed', { outcome }), 'mana/a')).toMatchObject({ status: 502, code: 'upstream_failed' });
    expect(fromRouterError(new RouterError('stream_interrupted', 'cut'), 'mana/a')).toMatchObject({ status: 502, code: 'stream_interrupted' });
    expect(fromRouterError(new RouterError('invalid_request', 'bad'), 'mana/a')).toMatchObject({ status: 400, code: 'invalid_request' });
    const tooLong = fromRouterError(new RouterError('context_length_exceeded', 'no window', { outcome, param: 'messages' }), 'mana/a');
    expect(tooLong).toMatchObject({ status: 400, code: 'context_length_exceeded', param: 'messages', message: 'no window' });
    expect(tooLong.outcome).toBe(outcome);
    const schema = fromRouterError(new RouterError('invalid_schema', 'bad schema', { param: 'response_format' }), 'mana/a');
    expect(schema).toMatchObject({ status: 400, code: 'invalid_schema', param: 'response_format' });
    const tooLarge = fromRouterError(new RouterError('schema_too_large', 'too large', { param: 'response_format' }), 'mana/a');
    expect(tooLarge).toMatchObject({ status: 400, code: 'schema_too_large', param: 'response_format' });
    expect(fromRouterError(new RouterError('invalid_config', 'oops'), 'mana/a')).toMatchObject({ status: 500, code: 'internal_error' });
    // The gateway closes its router only after its server stopped taking requests: a late one is told to retry.
    expect(fromRouterError(new RouterError('router_closed', 'closed'), 'mana/a')).toMatchObject({ status: 503, code: 'shutting_down' });
    const param = fromRouterError(new RouterError('unsupported_parameter', 'x', { param: 'n', outcome }), 'mana/a');
    expect(param).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'n' });
    expect(param.message).toContain("'n'");
    // Each target with what it could not do, when the attempt says.
    expect(param.message).toContain('(local/m1; cloud/m2: 503 Service Unavailable)');
  });

  it('names the route that serves an alias of the other kind (the router names only kinds)', () => {
    const noAttempts = (alias: string): RequestOutcome => ({ alias, target: undefined, attempts: [], upstreamCalls: 0, retryAfterSeconds: undefined });
    const chat = new RouterError('alias_kind_mismatch', 'mana/a is a chat alias, not an embedding one', {
      outcome: noAttempts('mana/a'),
      knownAliases: ['mana/embed'],
      param: 'model',
      aliasKind: 'chat',
    });
    expect(fromRouterError(chat, 'mana/a')).toMatchObject({
      status: 400,
      code: 'alias_kind_mismatch',
      param: 'model',
      message: 'mana/a is a chat alias: use it on /v1/chat/completions (embedding aliases: mana/embed)',
    });
    const embed = new RouterError('alias_kind_mismatch', 'x', { outcome: noAttempts('mana/embed'), param: 'model', aliasKind: 'embedding' });
    expect(fromRouterError(embed, 'mana/embed').message).toBe('mana/embed is an embedding alias: use it on /v1/embeddings (chat aliases: none configured)');
  });

  it('gives each gateway code its documented status', () => {
    expect(gatewayError('invalid_json', '').status).toBe(400);
    expect(gatewayError('invalid_utf8', '')).toMatchObject({ status: 400, code: 'invalid_utf8' });
    expect(gatewayError('missing_api_key', '').status).toBe(401);
    expect(gatewayError('invalid_admin_key', '').status).toBe(403);
    expect(gatewayError('request_too_large', '').status).toBe(413);
  });

  it('every code a client can receive is in the error reference (docs/api/errors.md)', () => {
    const readme = readFileSync(new URL('../../../../docs/api/errors.md', import.meta.url), 'utf8');
    const notSent = new Set([
      'client_closed_request', // 499: logged and counted, never sent (the client is gone)
      'stream_interrupted', // in the page's stream error event example, not in the table
    ]);
    const missing = Object.keys(GATEWAY_ERRORS).filter((code) => !notSent.has(code) && !readme.includes(`\`${code}\``));
    expect(missing).toEqual([]);
  });

  it('the attempt reasons table (docs/api/errors.md) lists every reason the router writes, and no other', () => {
    const page = readFileSync(new URL('../../../../docs/api/errors.md', import.meta.url), 'utf8');
    const section = page.slice(page.indexOf('## Attempt reasons'));
    // First column of each row: one reason or several joined by " / ", each in backticks.
    const documented = section
      .split('\n')
      .filter((line) => line.startsWith('| `') && !line.startsWith('| `reason` |'))
      .flatMap((line) => [...line.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
    const declared = [...ATTEMPT_REASONS, 'http_<status>', 'unconfigured: <why>'];
    expect([...documented].sort()).toEqual([...declared].sort());
  });
});
