import { describe, expect, it } from 'vitest';
import { BreakerState, CircuitBreaker } from './circuit-breaker.js';

const policy = { failureThreshold: 2, unhealthyPeriodMs: 60_000 };

function setup() {
  const clock = { now: 1_000_000 };
  return { clock, breaker: new CircuitBreaker(() => clock.now) };
}

describe('CircuitBreaker', () => {
  it('opens after 2 consecutive failures, for the 60 s period', () => {
    const { clock, breaker } = setup();
    expect(breaker.failure('refused', policy)).toBeUndefined();
    expect(breaker.state).toBe(BreakerState.Closed);
    expect(breaker.failure('refused', policy)).toBe('became_unhealthy');
    expect(breaker.snapshot()).toMatchObject({ state: 'open', consecutiveFailures: 2, openUntil: 1_060_000, lastError: 'refused', lastCheck: 1_000_000 });
    clock.now += 59_999;
    expect(breaker.state).toBe(BreakerState.Open);
    clock.now += 1;
    expect(breaker.state).toBe(BreakerState.HalfOpen);
  });

  it('a success in between resets the count', () => {
    const { breaker } = setup();
    breaker.failure('x', policy);
    expect(breaker.success()).toBeUndefined();
    breaker.failure('x', policy);
    expect(breaker.state).toBe(BreakerState.Closed);
  });

  it('one success closes it again', () => {
    const { clock, breaker } = setup();
    breaker.failure('x', policy);
    breaker.failure('x', policy);
    clock.now += 60_000;
    expect(breaker.success()).toBe('became_healthy');
    expect(breaker.snapshot()).toMatchObject({ state: 'closed', consecutiveFailures: 0, openUntil: undefined });
  });

  it('a failure while half-open reopens it at once for another period', () => {
    const { clock, breaker } = setup();
    breaker.failure('x', policy);
    breaker.failure('x', policy);
    clock.now += 61_000;
    expect(breaker.failure('still down', policy)).toBeUndefined(); // already unhealthy: no flip
    expect(breaker.snapshot()).toMatchObject({ state: 'open', openUntil: clock.now + 60_000, consecutiveFailures: 3, lastError: 'still down' });
  });

  it('failures while open do not extend the period', () => {
    const { clock, breaker } = setup();
    breaker.failure('x', policy);
    breaker.failure('x', policy);
    clock.now += 10_000;
    breaker.failure('y', policy);
    expect(breaker.snapshot().openUntil).toBe(1_060_000);
  });

  it('a threshold of 1 opens on the first failure', () => {
    const { breaker } = setup();
    expect(breaker.failure('x', { failureThreshold: 1, unhealthyPeriodMs: 5 })).toBe('became_unhealthy');
  });
});
