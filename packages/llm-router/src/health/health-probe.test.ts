import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ConfigSnapshot, HealthChangeEvent, ProviderConfig } from '../types.js';
import { HealthCache } from './health-cache.js';
import { HealthProbe } from './health-probe.js';
import { healthTestSnapshot } from './test-snapshot.js';

type Behaviour = { models: string[] } | { error: string } | 'hang';

/** A scripted listModels: per provider, what the next probes answer (the last one repeats). */
function fakeListModels(script: Record<string, Behaviour[]>) {
  const calls: string[] = [];
  const signals: AbortSignal[] = [];
  const listModels = (provider: ProviderConfig, signal: AbortSignal): Promise<string[]> => {
    calls.push(provider.name);
    signals.push(signal);
    const queue = script[provider.name] ?? [{ models: [] }];
    const behaviour = (queue.length > 1 ? queue.shift() : queue[0]) ?? { models: [] };
    if (behaviour === 'hang') {
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    }
    return 'error' in behaviour ? Promise.reject(new Error(behaviour.error)) : Promise.resolve(behaviour.models);
  };
  return { listModels, calls, signals, count: (name: string) => calls.filter((call) => call === name).length };
}

let snapshot: ConfigSnapshot;
let cache: HealthCache;
let events: HealthChangeEvent[];
let probe: HealthProbe | undefined;

function makeProbe(script: Record<string, Behaviour[]>) {
  const fake = fakeListModels(script);
  probe = new HealthProbe({ cache, config: () => snapshot, listModels: fake.listModels, now: () => Date.now() });
  return { probe, ...fake };
}

const healthyOf = (name: string) => cache.providerView(snapshot).find((view) => view.provider === name)?.healthy;

beforeEach(() => {
  vi.useFakeTimers({ now: Date.UTC(2026, 0, 1) });
  snapshot = healthTestSnapshot();
  cache = new HealthCache({ now: () => Date.now() });
  events = [];
  cache.onChange((event) => events.push(event));
});

afterEach(async () => {
  await probe?.stop();
  probe = undefined;
  vi.useRealTimers();
});

describe('HealthProbe.runOnce', () => {
  it('probes each configured provider some alias uses, once', async () => {
    const { probe, calls } = makeProbe({});
    await probe.runOnce();
    // together is used but has no key; openrouter and google are used by no alias.
    expect(calls.sort()).toEqual(['groq', 'local', 'loose', 'ollama']);
  });

  it('marks a provider unhealthy after 2 failed probes and healthy after 1 success', async () => {
    const { probe } = makeProbe({ ollama: [{ error: 'connect ECONNREFUSED 127.0.0.1:11434' }, { error: 'refused' }, { models: ['gemma3:4b'] }] });
    await probe.runOnce();
    expect(healthyOf('ollama')).toBe(true);
    await probe.runOnce();
    expect(healthyOf('ollama')).toBe(false);
    expect(events).toEqual([expect.objectContaining({ provider: 'ollama', healthy: false, reason: 'probe failed: refused' })]);

    // Inside the 60 s period the provider is left alone.
    const calls = makeProbe({ ollama: [{ models: ['gemma3:4b'] }] });
    await calls.probe.runOnce();
    expect(calls.count('ollama')).toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    await calls.probe.runOnce();
    expect(calls.count('ollama')).toBe(1);
    expect(healthyOf('ollama')).toBe(true);
    expect(events.at(-1)).toMatchObject({ provider: 'ollama', healthy: true });
  });

  it('records model listings', async () => {
    const { probe } = makeProbe({ ollama: [{ models: ['gemma3:4b'] }] });
    await probe.runOnce();
    const longForm = snapshot.aliases.get('mana/long-form')!.chain[0]!;
    expect(cache.check(longForm, snapshot.providers.get('ollama'))).toEqual({ ok: false, reason: 'model_missing', kind: 'model_missing' });
  });

  it('bounds each probe by probe_timeout and aborts it', async () => {
    const { probe, signals } = makeProbe({ loose: ['hang'] });
    const round = probe.runOnce();
    await vi.advanceTimersByTimeAsync(2_999);
    expect(cache.breakerOf('loose').consecutiveFailures).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    await round;
    expect(cache.breakerOf('loose')).toMatchObject({ consecutiveFailures: 1, lastError: 'probe failed: probe timed out after 3000 ms' });
    expect(signals.some((signal) => signal.aborted)).toBe(true);
  });

  it('joins a round already running', async () => {
    const { probe, count } = makeProbe({});
    await Promise.all([probe.runOnce(), probe.runOnce()]);
    expect(count('ollama')).toBe(1);
  });
});

describe('HealthProbe loop', () => {
  it('probes at start and every probe_interval', async () => {
    const { probe, count } = makeProbe({});
    probe.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(count('groq')).toBe(1);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(count('groq')).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(count('groq')).toBe(2);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(count('groq')).toBe(4);
  });

  it('goes unhealthy after 2 failures, respects the 60 s period, then re-probes and recovers', async () => {
    const { probe, count } = makeProbe({ groq: [{ error: 'down' }, { error: 'down' }, { models: [] }] });
    probe.start();
    await vi.advanceTimersByTimeAsync(0); // t=0: failure 1
    await vi.advanceTimersByTimeAsync(30_000); // t=30 s: failure 2 → unhealthy until t=90 s
    expect(healthyOf('groq')).toBe(false);
    expect(cache.breakerOf('groq').openUntil).toBe(Date.UTC(2026, 0, 1) + 90_000);
    await vi.advanceTimersByTimeAsync(59_999); // no probe while the period runs
    expect(count('groq')).toBe(2);
    expect(healthyOf('groq')).toBe(false);
    await vi.advanceTimersByTimeAsync(1); // t=90 s: half-open, re-probed at once
    expect(count('groq')).toBe(3);
    expect(healthyOf('groq')).toBe(true);
    expect(events.map((event) => event.healthy)).toEqual([false, true]);
  });

  it('reads the current config on every round', async () => {
    const { probe, count } = makeProbe({});
    probe.start();
    await vi.advanceTimersByTimeAsync(0);
    snapshot = healthTestSnapshot('', {}); // reload: groq lost its key
    await vi.advanceTimersByTimeAsync(30_000);
    expect(count('groq')).toBe(1);
    expect(count('ollama')).toBe(2);
  });

  it('stop() waits for the round in flight, drops its results and leaves no timers', async () => {
    const { probe, signals, calls } = makeProbe({ ollama: ['hang'] });
    probe.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBeGreaterThan(0); // the hanging probe's timeout
    await probe.stop();
    expect(vi.getTimerCount()).toBe(0);
    expect(signals[calls.indexOf('ollama')]?.aborted).toBe(true);
    expect(cache.breakerOf('ollama').consecutiveFailures).toBe(0);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('uses unref’d timers so it never keeps the process alive', async () => {
    vi.useRealTimers();
    const { probe } = makeProbe({ ollama: ['hang'] });
    const spy = vi.spyOn(globalThis, 'setTimeout');
    probe.start();
    await new Promise((resolve) => setImmediate(resolve));
    const timers = spy.mock.results.map((result) => result.value as NodeJS.Timeout);
    spy.mockRestore();
    expect(timers.length).toBeGreaterThan(0); // the probe timeouts and the next round
    expect(timers.every((timer) => !timer.hasRef())).toBe(true);
    await probe.stop();
  });
});
