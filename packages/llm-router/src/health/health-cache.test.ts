import { beforeEach, describe, expect, it } from 'vitest';
import type { ConfigSnapshot, HealthChangeEvent, ProviderConfig, TargetConfig } from '../types.js';
import { HealthCache } from './health-cache.js';
import { healthTestSnapshot } from './test-snapshot.js';

let clock: { now: number };
let cache: HealthCache;
let snapshot: ConfigSnapshot;
let events: HealthChangeEvent[];

const T0 = Date.UTC(2026, 0, 1);

function target(alias: string, index: number): TargetConfig {
  const found = snapshot.aliases.get(alias)?.chain[index];
  if (found === undefined) throw new Error(`no target ${alias}[${index}]`);
  return found;
}

function check(alias: string, index: number) {
  const t = target(alias, index);
  return cache.check(t, snapshot.providers.get(t.provider));
}

beforeEach(() => {
  clock = { now: T0 };
  cache = new HealthCache({ now: () => clock.now });
  snapshot = healthTestSnapshot();
  events = [];
  cache.onChange((event) => events.push(event));
});

describe('HealthCache breaker', () => {
  it('is unhealthy after 2 failures, skipped for 60 s, healthy after 1 success', () => {
    const settings = snapshot.providers.get('groq')!.settings;
    cache.reportFailure('groq', 'connect_refused', settings);
    expect(check('mana/fast-text', 1)).toEqual({ ok: true });
    cache.reportFailure('groq', 'connect_refused', settings);
    expect(check('mana/fast-text', 1)).toEqual({ ok: false, reason: 'unhealthy', kind: 'unhealthy', until: T0 + 60_000 });
    expect(events).toEqual([{ provider: 'groq', healthy: false, reason: 'connect_refused', at: T0 }]);

    clock.now = T0 + 59_000;
    expect(check('mana/reasoning', 0)).toMatchObject({ ok: false, reason: 'unhealthy' });
    clock.now = T0 + 60_000; // half-open: may be tried again
    expect(check('mana/reasoning', 0)).toEqual({ ok: true });
    cache.reportSuccess('groq');
    expect(events.at(-1)).toEqual({ provider: 'groq', healthy: true, reason: null, at: T0 + 60_000 });
    expect(events).toHaveLength(2);
  });

  it('never passes a known api key on in events', () => {
    cache.retain(snapshot);
    cache.reportFailure('groq', 'rejected key gsk-test-secret-123', { ...snapshot.settings, failureThreshold: 1 });
    expect(events[0]?.reason).toBe('rejected key [redacted]');
  });

  it('a listener that throws does not break reporting: the provider is unhealthy and later listeners still hear of it', () => {
    cache.onChange(() => {
      throw new Error('metrics down');
    });
    const later: HealthChangeEvent[] = [];
    cache.onChange((event) => later.push(event));
    const settings = { ...snapshot.settings, failureThreshold: 1 };
    expect(() => cache.reportFailure('groq', 'x', settings)).not.toThrow();
    expect(check('mana/reasoning', 0)).toEqual({ ok: false, reason: 'unhealthy', kind: 'unhealthy', until: T0 + 60_000 });
    expect(cache.breakerOf('groq')).toMatchObject({ consecutiveFailures: 1, openUntil: T0 + 60_000 });
    expect(later).toEqual([{ provider: 'groq', healthy: false, reason: 'x', at: T0 }]);
  });

  it('unsubscribes: a removed listener hears nothing, the others still do', () => {
    const removed: HealthChangeEvent[] = [];
    const off = cache.onChange((event) => removed.push(event));
    off();
    cache.reportFailure('groq', 'x', { ...snapshot.settings, failureThreshold: 1 });
    expect(removed).toEqual([]);
    expect(events).toEqual([{ provider: 'groq', healthy: false, reason: 'x', at: T0 }]);
    expect(check('mana/reasoning', 0)).toMatchObject({ ok: false, reason: 'unhealthy' });
  });
});

describe('HealthCache check order and reasons', () => {
  it('reports unconfigured providers with the missing variable', () => {
    expect(check('mana/long-form', 1)).toEqual({ ok: false, reason: 'unconfigured: missing api key (TOGETHER_API_KEY)', kind: 'unconfigured' });
    const ghost: TargetConfig = { ...target('mana/vision', 0), id: 'ghost/x', provider: 'ghost' };
    expect(cache.check(ghost, undefined)).toEqual({ ok: false, reason: 'unconfigured: unknown provider ghost', kind: 'unconfigured' });
  });

  it('cools a target down until a time, then lets it through', () => {
    cache.coolDown('groq/llama-3.1-8b-instant', T0 + 15_000, 'http_429');
    expect(check('mana/fast-text', 1)).toEqual({ ok: false, reason: 'cooling_down', kind: 'cooling_down', until: T0 + 15_000 });
    // other models of the same provider are not affected
    expect(check('mana/reasoning', 0)).toEqual({ ok: true });
    // a shorter cooldown does not cut a longer one short
    cache.coolDown('groq/llama-3.1-8b-instant', T0 + 5_000, 'http_503');
    clock.now = T0 + 14_999;
    expect(check('mana/fast-text', 1)).toMatchObject({ reason: 'cooling_down' });
    clock.now = T0 + 15_000;
    expect(check('mana/fast-text', 1)).toEqual({ ok: true });
  });

  it('returns the first reason in the order unconfigured, unhealthy, model_missing, cooling_down', () => {
    const settings = { ...snapshot.settings, failureThreshold: 1 };
    cache.coolDown('local/qwen', T0 + 99_000, 'http_503');
    expect(check('mana/structured', 0)).toMatchObject({ reason: 'cooling_down' });
    cache.recordProbe('local', { ok: true, models: ['other'] }, settings);
    expect(check('mana/structured', 0)).toEqual({ ok: false, reason: 'model_missing', kind: 'model_missing' });
    cache.reportFailure('local', 'reset', settings);
    expect(check('mana/structured', 0)).toMatchObject({ reason: 'unhealthy' });
    cache.coolDown('together/meta-llama/Llama-3.3-70B', T0 + 99_000, 'http_503');
    expect(check('mana/long-form', 1)).toMatchObject({ reason: expect.stringMatching(/^unconfigured: /) });
  });
});

describe('HealthCache model listings', () => {
  const settings = () => snapshot.settings;

  it('skips an ollama model that is not pulled until a probe lists it', () => {
    expect(check('mana/long-form', 0)).toEqual({ ok: true }); // no listing yet: assume present
    cache.recordProbe('ollama', { ok: true, models: ['gemma3:4b', 'llava:latest'] }, settings());
    expect(check('mana/long-form', 0)).toEqual({ ok: false, reason: 'model_missing', kind: 'model_missing' });
    expect(check('mana/fast-text', 0)).toEqual({ ok: true });
    expect(check('mana/vision', 0)).toEqual({ ok: true }); // `llava` means `llava:latest`
    cache.recordProbe('ollama', { ok: false, error: 'refused' }, settings()); // a failed probe keeps the last listing
    expect(check('mana/long-form', 0)).toEqual({ ok: false, reason: 'model_missing', kind: 'model_missing' });
    cache.recordProbe('ollama', { ok: true, models: ['gemma3:4b', 'gemma3:12b'] }, settings());
    expect(check('mana/long-form', 0)).toEqual({ ok: true });
  });

  it('checks openai listings only with check_models', () => {
    cache.recordProbe('local', { ok: true, models: ['llama'] }, settings());
    cache.recordProbe('loose', { ok: true, models: ['llama'] }, settings());
    expect(check('mana/structured', 0)).toEqual({ ok: false, reason: 'model_missing', kind: 'model_missing' });
    expect(check('mana/structured', 1)).toEqual({ ok: true });
  });
});

describe('HealthCache soonestRecovery', () => {
  it('is the earliest time a blocked target can be tried again', () => {
    const settings = { ...snapshot.settings, failureThreshold: 1, unhealthyPeriodMs: 60_000 };
    const chain = snapshot.aliases.get('mana/fast-text')!.chain;
    cache.reportFailure('ollama', 'refused', settings);
    cache.coolDown('groq/llama-3.1-8b-instant', T0 + 20_000, 'http_429');
    expect(cache.soonestRecovery(chain, snapshot.providers)).toBe(T0 + 20_000);
    // a target blocked twice recovers when the later block ends
    cache.coolDown('ollama/gemma3:4b', T0 + 90_000, 'http_503');
    cache.coolDown('groq/llama-3.1-8b-instant', T0 + 120_000, 'http_429');
    expect(cache.soonestRecovery(chain, snapshot.providers)).toBe(T0 + 90_000);
  });

  it('check() reports the later of two overlapping blocks as until, whichever is named the reason', () => {
    const settings = { ...snapshot.settings, failureThreshold: 1, unhealthyPeriodMs: 60_000 };
    cache.reportFailure('ollama', 'refused', settings);
    cache.coolDown('ollama/gemma3:4b', T0 + 90_000, 'http_503');
    expect(check('mana/fast-text', 0)).toEqual({ ok: false, reason: 'unhealthy', kind: 'unhealthy', until: T0 + 90_000 });
    clock.now = T0 + 60_000; // the breaker is half-open now: only the cooldown is left
    expect(check('mana/fast-text', 0)).toEqual({ ok: false, reason: 'cooling_down', kind: 'cooling_down', until: T0 + 90_000 });
    cache.coolDown('ollama/gemma3:4b', T0 + 30_000, 'http_503'); // shorter: ignored
    expect(check('mana/fast-text', 0)).toEqual({ ok: false, reason: 'cooling_down', kind: 'cooling_down', until: T0 + 90_000 });
  });

  it('is undefined when waiting will not help', () => {
    expect(cache.soonestRecovery(snapshot.aliases.get('mana/long-form')!.chain.slice(1), snapshot.providers)).toBeUndefined();
  });
});

describe('HealthCache views', () => {
  it('providerView reports state with ISO times and without secrets', () => {
    const settings = { ...snapshot.settings, failureThreshold: 1 };
    cache.reportFailure('groq', 'HTTP 401 for key gsk-test-secret-123 (Authorization: Bearer gsk-test-secret-123)', settings);
    const views = cache.providerView(snapshot);
    const groq = views.find((view) => view.provider === 'groq');
    expect(groq).toEqual({
      provider: 'groq',
      type: 'openai',
      configured: true,
      unconfiguredReason: undefined,
      healthy: false,
      lastCheck: new Date(T0).toISOString(),
      consecutiveFailures: 1,
      unhealthyUntil: new Date(T0 + 60_000).toISOString(),
      lastError: expect.any(String),
    });
    expect(groq?.lastError).not.toContain('gsk-test-secret-123');
    expect(JSON.stringify(views)).not.toContain('gsk-test-secret');
    expect(views.find((view) => view.provider === 'together')).toMatchObject({
      configured: false,
      unconfiguredReason: 'missing api key (TOGETHER_API_KEY)',
      healthy: false,
      lastCheck: null,
    });
    // Nothing has checked ollama yet: not known, rather than healthy.
    expect(views.find((view) => view.provider === 'ollama')).toMatchObject({ healthy: null, lastCheck: null, unhealthyUntil: null, lastError: null });
    cache.reportSuccess('ollama');
    expect(cache.providerView(snapshot).find((view) => view.provider === 'ollama')).toMatchObject({ healthy: true, lastCheck: new Date(T0).toISOString() });
  });

  it('aliasView shows each target as the router would treat it now', () => {
    cache.coolDown('groq/llama-3.1-8b-instant', T0 + 15_000, 'http_429');
    cache.recordProbe('ollama', { ok: true, models: ['gemma3:4b'] }, snapshot.settings);
    const views = cache.aliasView(snapshot);
    expect(views.map((view) => view.alias)).toEqual(['mana/fast-text', 'mana/long-form', 'mana/structured', 'mana/reasoning', 'mana/vision', 'mana/embed']);
    expect(views.at(-1)).toMatchObject({ kind: 'embedding', embeddingSpace: 'nomic-embed-text-v1.5', maxBatch: undefined });
    expect(views[0]).toEqual({
      alias: 'mana/fast-text',
      description: '',
      kind: 'chat',
      embeddingSpace: undefined,
      maxBatch: undefined,
      strategy: 'failover',
      chain: [
        { target: 'ollama/gemma3:4b', provider: 'ollama', model: 'gemma3:4b', weight: 1, state: 'healthy', until: null, reason: null },
        { target: 'groq/llama-3.1-8b-instant', provider: 'groq', model: 'llama-3.1-8b-instant', weight: 1, state: 'cooling_down', until: new Date(T0 + 15_000).toISOString(), reason: 'http_429' },
      ],
    });
    expect(views[1]?.chain.map((t) => [t.state, t.reason])).toEqual([
      ['model_missing', 'gemma3:12b is not listed by ollama'],
      ['unconfigured', 'missing api key (TOGETHER_API_KEY)'],
    ]);
  });
});

describe('HealthCache retain', () => {
  /** The test snapshot with its providers edited (a reload of a changed file). */
  function reloadWith(edit: (providers: Map<string, ProviderConfig>) => void): ConfigSnapshot {
    const providers = new Map(healthTestSnapshot().providers);
    edit(providers);
    return { ...healthTestSnapshot(), providers };
  }

  it('keeps the state of unchanged providers and targets across a reload, drops the rest', () => {
    const settings = { ...snapshot.settings, failureThreshold: 1 };
    cache.retain(snapshot); // the snapshot the state is gathered against
    cache.reportFailure('ollama', 'refused', settings);
    cache.coolDown('groq/llama-3.1-8b-instant', T0 + 15_000, 'http_429');
    cache.reportFailure('local', 'refused', settings);
    cache.coolDown('loose/qwen', T0 + 15_000, 'http_503');

    // Reload: ollama and groq unchanged, `local` moved to another port, `loose` removed.
    const next = reloadWith((providers) => {
      providers.set('local', { ...providers.get('local')!, baseUrl: 'http://127.0.0.1:11/v1' });
      providers.delete('loose');
    });
    cache.retain(next);
    const at = (alias: string, index: number) => {
      const t = next.aliases.get(alias)!.chain[index]!;
      return cache.check(t, next.providers.get(t.provider));
    };
    expect(at('mana/fast-text', 0)).toMatchObject({ reason: 'unhealthy' });
    expect(at('mana/fast-text', 1)).toMatchObject({ reason: 'cooling_down' });
    expect(at('mana/structured', 0)).toEqual({ ok: true });
    expect(cache.breakerOf('local').consecutiveFailures).toBe(0);
    expect(cache.cooldownOf('loose/qwen')).toBeUndefined();
  });

  it('forgets a provider whose key changed', () => {
    cache.retain(snapshot);
    cache.reportFailure('groq', 'http_401', { ...snapshot.settings, failureThreshold: 1 });
    const rotated = healthTestSnapshot('', { GROQ_API_KEY: 'gsk-new-key-456' });
    cache.retain(rotated);
    const groqTarget = rotated.aliases.get('mana/reasoning')!.chain[0]!;
    expect(cache.check(groqTarget, rotated.providers.get('groq'))).toEqual({ ok: true });
  });

  it('without an earlier retain, compares against the providers it has checked', () => {
    const settings = { ...snapshot.settings, failureThreshold: 1 };
    expect(check('mana/reasoning', 0)).toEqual({ ok: true }); // the cache sees groq's config here
    cache.reportFailure('groq', 'refused', settings);
    cache.retain(healthTestSnapshot());
    expect(check('mana/reasoning', 0)).toMatchObject({ reason: 'unhealthy' });
  });
});
