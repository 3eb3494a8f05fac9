import { describe, expect, it } from 'vitest';
import { classifyFailure } from './classify-error.js';
import { DEFAULT_SETTINGS } from '../config/defaults.js';
import { nextStep, type StepPolicy } from './next-step.js';
import { PassTally, type PassKind, type PassSummary } from './pass-summary.js';

/** What the attempt loop does when a walk over the plan found no answer: data in, step out, no sockets. */

const NOW = 1_000_000;
const realtime: StepPolicy = { onAllUnhealthy: 'fail', background: false, maxWaitMs: 10_000, now: NOW };
const background: StepPolicy = { ...realtime, background: true };
const tryAnyway: StepPolicy = { ...realtime, onAllUnhealthy: 'try_anyway' };

function pass(kind: PassKind, build: (tally: PassTally) => void): PassSummary {
  const tally = new PassTally(kind);
  build(tally);
  return tally.done();
}

const ctx = { aliasTarget: true, failOverOnContextLength: true, settings: DEFAULT_SETTINGS, now: NOW };
const refused = new Error('remote image') as Error & { code: string };
refused.code = 'unsupported_request';
/** Decisions as classify-error.ts makes them. */
const decisions = {
  http503: classifyFailure({ kind: 'http', response: { ok: false, status: 503, body: '', contentType: undefined, headers: {} } }, ctx),
  contextLength: classifyFailure(
    { kind: 'http', response: { ok: false, status: 400, body: '{"error":{"message":"maximum context length is 8192 tokens"}}', contentType: 'application/json', headers: {} } },
    ctx,
  ),
  unsupported: classifyFailure({ kind: 'error', error: refused }, ctx),
};
const unhealthyUntil = (until: number) => ({ ok: false as const, reason: 'unhealthy' as const, kind: 'unhealthy' as const, until });
const coolingUntil = (until: number) => ({ ok: false as const, reason: 'cooling_down' as const, kind: 'cooling_down' as const, until });
const unconfigured = { ok: false as const, reason: 'unconfigured: missing api key (GROQ_API_KEY)' as const, kind: 'unconfigured' as const };

describe('nextStep', () => {
  it('fails with context_length_exceeded when every attempt was too small, estimated or said so', () => {
    const walked = pass('first', (t) => {
      t.tooSmall();
      t.callFailed(decisions.contextLength);
    });
    expect(nextStep([walked], realtime)).toEqual({ kind: 'fail', code: 'context_length_exceeded' });
  });

  it('fails with upstream_failed when any call failed, even if others were skipped or too small', () => {
    const walked = pass('first', (t) => {
      t.tooSmall();
      t.blocked(unhealthyUntil(NOW + 5_000), true);
      t.callFailed(decisions.http503);
    });
    expect(nextStep([walked], tryAnyway)).toEqual({ kind: 'fail', code: 'upstream_failed' });
  });

  it('walks back once to a target passed by because it was full when what followed failed, then fails as before', () => {
    const spilled = pass('first', (t) => {
      t.full();
      t.callFailed(decisions.http503);
    });
    expect(nextStep([spilled], realtime)).toEqual({ kind: 'wait_for_room' });
    const stillFull = pass('for_room', (t) => t.full());
    expect(nextStep([spilled, stillFull], realtime)).toEqual({ kind: 'fail', code: 'upstream_failed' });
  });

  it('fails with unsupported_parameter (naming the first one) or unsupported_request when every target refused', () => {
    const params = pass('first', (t) => {
      t.cannotHonour('logprobs');
      t.cannotHonour('n');
      t.callFailed(decisions.unsupported);
    });
    expect(nextStep([params], realtime)).toEqual({ kind: 'fail', code: 'unsupported_parameter', param: 'logprobs' });
    const request = pass('first', (t) => t.callFailed(decisions.unsupported));
    expect(nextStep([request], realtime)).toEqual({ kind: 'fail', code: 'unsupported_request' });
  });

  it('fails with no_healthy_provider and the soonest recovery when every target was skipped for health', () => {
    const walked = pass('first', (t) => {
      t.blocked(unhealthyUntil(NOW + 30_000), true);
      t.blocked(coolingUntil(NOW + 20_000), true);
      t.blocked(unconfigured, false);
    });
    expect(nextStep([walked], realtime)).toEqual({ kind: 'fail', code: 'no_healthy_provider', recoveryAt: NOW + 20_000 });
    expect(nextStep([pass('first', () => {})], realtime)).toEqual({ kind: 'fail', code: 'no_healthy_provider', recoveryAt: undefined });
  });

  it('with try_anyway walks once more ignoring health, but not for a target that can never work (unconfigured)', () => {
    const blocked = pass('first', (t) => t.blocked(unhealthyUntil(NOW + 30_000), true));
    expect(nextStep([blocked], tryAnyway)).toEqual({ kind: 'retry_ignoring_health' });
    expect(nextStep([blocked], realtime)).toMatchObject({ kind: 'fail', code: 'no_healthy_provider' });
    const never = pass('first', (t) => t.blocked(unconfigured, false));
    expect(nextStep([never], tryAnyway)).toEqual({ kind: 'fail', code: 'no_healthy_provider', recoveryAt: undefined });
    // Once only, whatever the second walk saw: the loop stays bounded.
    const again = pass('ignoring_health', (t) => t.blocked(coolingUntil(NOW + 1_000), true));
    expect(nextStep([blocked, again], tryAnyway)).toEqual({ kind: 'fail', code: 'no_healthy_provider', recoveryAt: NOW + 1_000 });
  });

  it('counts the attempts of every pass: a target skipped first and too small when tried fails as upstream_failed', () => {
    const first = pass('first', (t) => t.blocked(unhealthyUntil(NOW + 30_000), true));
    const second = pass('ignoring_health', (t) => t.callFailed(decisions.contextLength));
    expect(nextStep([first, second], tryAnyway)).toEqual({ kind: 'fail', code: 'upstream_failed' });
  });

  it('lets a background request wait out a cooldown once, if it ends within the longest retry_max_wait', () => {
    const cooling = pass('first', (t) => t.blocked(coolingUntil(NOW + 4_000), true));
    expect(nextStep([cooling], background)).toEqual({ kind: 'wait', ms: 4_000 });
    expect(nextStep([cooling], { ...background, now: NOW + 5_000 })).toEqual({ kind: 'wait', ms: 0 });
    expect(nextStep([cooling], { ...background, maxWaitMs: 3_999 })).toEqual({ kind: 'fail', code: 'no_healthy_provider', recoveryAt: NOW + 4_000 });
    expect(nextStep([cooling], realtime)).toEqual({ kind: 'fail', code: 'no_healthy_provider', recoveryAt: NOW + 4_000 });
    // An open breaker is no cooldown: waiting for it is not offered.
    const unhealthy = pass('first', (t) => t.blocked(unhealthyUntil(NOW + 4_000), true));
    expect(nextStep([unhealthy], background)).toEqual({ kind: 'fail', code: 'no_healthy_provider', recoveryAt: NOW + 4_000 });
    // Once only.
    const afterWait = pass('after_wait', (t) => t.blocked(coolingUntil(NOW + 8_000), true));
    expect(nextStep([cooling, afterWait], background)).toEqual({ kind: 'fail', code: 'no_healthy_provider', recoveryAt: NOW + 8_000 });
  });

  it('prefers try_anyway over waiting', () => {
    const cooling = pass('first', (t) => t.blocked(coolingUntil(NOW + 4_000), true));
    expect(nextStep([cooling], { ...background, onAllUnhealthy: 'try_anyway' })).toEqual({ kind: 'retry_ignoring_health' });
  });
});

describe('PassTally', () => {
  it('sums what a walk saw; a 503 counts as failed, a refusal before any call as a refusal', () => {
    const walked = pass('first', (t) => {
      t.tooSmall();
      t.cannotHonour('logprobs');
      t.blocked(coolingUntil(NOW + 9_000), true);
      t.blocked(unhealthyUntil(NOW + 3_000), true);
      t.unusable();
      t.full();
      t.callFailed(decisions.http503);
      t.callFailed(decisions.unsupported);
      t.callFailed(decisions.contextLength);
    });
    expect(walked).toEqual({
      kind: 'first',
      attempts: 9,
      failed: 2,
      refusals: 2,
      contextMisses: 2,
      unsupportedParam: 'logprobs',
      skippedForHealth: true,
      coolingDown: true,
      soonestRecovery: NOW + 3_000,
      passedFull: true,
    });
  });
});
