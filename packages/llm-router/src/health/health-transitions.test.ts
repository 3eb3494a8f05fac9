import { beforeEach, describe, expect, it } from 'vitest';
import type { ConfigSnapshot, HealthTransition } from '../types.js';
import { HealthCache } from './health-cache.js';
import { healthTestSnapshot } from './test-snapshot.js';

const T0 = Date.UTC(2026, 0, 1);

let clock: { now: number };
let snapshot: ConfigSnapshot;

beforeEach(() => {
  clock = { now: T0 };
  snapshot = healthTestSnapshot();
});

function newCache(): HealthCache {
  return new HealthCache({ now: () => clock.now });
}

/** A new cache and the transitions it announces, in order. */
function observedCache(): { cache: HealthCache; announced: HealthTransition[] } {
  const cache = newCache();
  const announced: HealthTransition[] = [];
  cache.observeTransitions((t) => announced.push(t));
  return { cache, announced };
}

const groqSettings = () => snapshot.providers.get('groq')!.settings;

function checkOf(cache: HealthCache, alias: string, index: number) {
  const t = snapshot.aliases.get(alias)!.chain[index]!;
  return cache.check(t, snapshot.providers.get(t.provider));
}

describe('HealthCache transitions between replicas', () => {
  it('announces a breaker opening, a cooldown and the recovery, each once, with until and reason', () => {
    const { cache, announced: seen } = observedCache();
    const settings = groqSettings();
    cache.reportFailure('groq', 'connect_refused', settings);
    expect(seen).toEqual([]); // one failure of two: no transition
    cache.reportFailure('groq', 'connect_refused', settings);
    cache.reportFailure('groq', 'connect_refused', settings); // already open: nothing new
    cache.coolDown('ollama/gemma3:4b', T0 + 5_000, 'rate_limited');
    cache.coolDown('ollama/gemma3:4b', T0 + 4_000, 'rate_limited'); // shorter: kept the longer, nothing new
    clock.now = T0 + 60_000;
    cache.reportSuccess('groq');
    cache.reportSuccess('groq');
    expect(seen).toEqual([
      { kind: 'provider_unhealthy', subject: 'groq', until: T0 + 60_000, reason: 'connect_refused', at: T0 },
      { kind: 'cooldown', subject: 'ollama/gemma3:4b', until: T0 + 5_000, reason: 'rate_limited', at: T0 },
      { kind: 'provider_healthy', subject: 'groq', at: T0 + 60_000 },
    ]);
  });

  it('announces a reopening after a failed half-open trial (a new period others should skip)', () => {
    const { cache, announced: seen } = observedCache();
    const settings = groqSettings();
    cache.reportFailure('groq', 'a', settings);
    cache.reportFailure('groq', 'a', settings);
    clock.now = T0 + 60_000;
    cache.reportFailure('groq', 'b', settings);
    expect(seen.map((t) => t.kind === 'provider_unhealthy' && t.until)).toEqual([T0 + 60_000, T0 + 120_000]);
  });

  it('a transition applied on another cache makes it skip the provider or target, and is not announced again', () => {
    const { cache: a, announced: fromA } = observedCache();
    const { cache: b, announced: announcedByB } = observedCache();
    const settings = groqSettings();
    a.reportFailure('groq', 'connect_refused', settings);
    a.reportFailure('groq', 'connect_refused', settings);
    a.coolDown('ollama/gemma3:4b', T0 + 5_000, 'rate_limited');

    expect(checkOf(b, 'mana/fast-text', 1)).toEqual({ ok: true });
    expect(fromA.map((t) => b.applyTransition(t))).toEqual([true, true]);
    expect(fromA.map((t) => b.applyTransition(t))).toEqual([false, false]); // the second delivery (reconciliation) changes nothing
    expect(checkOf(b, 'mana/fast-text', 1)).toEqual({ ok: false, reason: 'unhealthy', kind: 'unhealthy', until: T0 + 60_000 });
    expect(checkOf(b, 'mana/fast-text', 0)).toEqual({ ok: false, reason: 'cooling_down', kind: 'cooling_down', until: T0 + 5_000 });
    expect(b.providerView(snapshot).find((p) => p.provider === 'groq')).toMatchObject({ healthy: false, lastError: 'connect_refused' });
    expect(announcedByB).toEqual([]);

    clock.now = T0 + 61_000;
    a.reportSuccess('groq');
    expect(b.applyTransition(fromA.at(-1)!)).toBe(true);
    expect(checkOf(b, 'mana/fast-text', 1)).toEqual({ ok: true });
    expect(b.providerView(snapshot).find((p) => p.provider === 'groq')?.healthy).toBe(true);
    expect(announcedByB).toEqual([]);
  });

  it('ignores stale transitions: an ended period, a failure older than a local success, a recovery older than a local failure', () => {
    const b = newCache();
    const settings = groqSettings();
    clock.now = T0 + 10_000;
    expect(b.applyTransition({ kind: 'provider_unhealthy', subject: 'groq', until: T0 + 5_000, reason: 'x', at: T0 })).toBe(false);
    expect(b.applyTransition({ kind: 'cooldown', subject: 'ollama/gemma3:4b', until: T0 + 5_000, reason: 'x', at: T0 })).toBe(false);
    expect(b.providerView(snapshot).find((p) => p.provider === 'groq')?.healthy).toBeNull();

    clock.now = T0 + 10_000;
    b.reportSuccess('groq'); // seen healthy here after the other replica's failure at T0 + 9 s
    expect(b.applyTransition({ kind: 'provider_unhealthy', subject: 'groq', until: T0 + 69_000, reason: 'x', at: T0 + 9_000 })).toBe(false);
    expect(checkOf(b, 'mana/reasoning', 0)).toEqual({ ok: true });

    b.reportFailure('groq', 'connect_refused', settings);
    b.reportFailure('groq', 'connect_refused', settings);
    expect(b.applyTransition({ kind: 'provider_healthy', subject: 'groq', at: T0 + 9_000 })).toBe(false);
    expect(checkOf(b, 'mana/reasoning', 0)).toMatchObject({ ok: false, kind: 'unhealthy' });
  });

  it('an observer that throws does not break the report', () => {
    const cache = newCache();
    cache.observeTransitions(() => {
      throw new Error('sync down');
    });
    const settings = groqSettings();
    cache.reportFailure('groq', 'x', settings);
    cache.reportFailure('groq', 'x', settings);
    expect(checkOf(cache, 'mana/reasoning', 0)).toMatchObject({ ok: false, kind: 'unhealthy' });
  });
});
