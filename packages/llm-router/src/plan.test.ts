import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from './config/defaults.js';
import { splitTarget } from './config/targets.js';
import type { AliasConfig, Strategy, TargetConfig } from './types.js';
import { buildPlan, type PlanContext, weightedIndex } from './plan.js';
import { seededRandom } from '@mana/llm-testkit';

function target(id: string, weight = 1): TargetConfig {
  const { provider, model } = splitTarget(id)!;
  return { id, provider, model, weight, settings: DEFAULT_SETTINGS, price: undefined, contextWindow: undefined };
}

function alias(strategy: Strategy, chain: TargetConfig[]): AliasConfig {
  return { name: 'mana/test', description: '', kind: 'chat', embeddingSpace: undefined, maxBatch: undefined, strategy, onAllUnhealthy: 'fail', failOverOnEmpty: true, failOverOn: new Set(['empty']), failOverOnContextLength: true, hedgeBackground: false, chain };
}

function ctx(overrides: Partial<PlanContext> = {}): PlanContext {
  return { random: () => 0, rotation: 0, inFlight: () => 0, ...overrides };
}

const ids = (plan: TargetConfig[]) => plan.map((t) => t.id);
const abc = [target('p/a'), target('p/b'), target('p/c')];

describe('buildPlan', () => {
  it('failover keeps the listed order', () => {
    expect(ids(buildPlan(alias('failover', abc), ctx({ rotation: 5, random: () => 0.9 })))).toEqual(['p/a', 'p/b', 'p/c']);
  });

  it('round_robin over 2 targets × 4 requests gives each 2 first places', () => {
    const two = alias('round_robin', [target('p/a'), target('p/b')]);
    const firsts = [0, 1, 2, 3].map((rotation) => buildPlan(two, ctx({ rotation }))[0]?.id);
    expect(firsts).toEqual(['p/a', 'p/b', 'p/a', 'p/b']);
    expect(ids(buildPlan(two, ctx({ rotation: 1 })))).toEqual(['p/b', 'p/a']);
  });

  it('round_robin puts the chosen target first and the rest in listed order', () => {
    expect(ids(buildPlan(alias('round_robin', abc), ctx({ rotation: 4 })))).toEqual(['p/b', 'p/a', 'p/c']);
    expect(ids(buildPlan(alias('round_robin', abc), ctx({ rotation: -1 })))).toEqual(['p/c', 'p/a', 'p/b']);
  });

  it('weighted 3:1 over 4,000 plans lands within ±3% of 75%', () => {
    const weighted = alias('weighted', [target('p/heavy', 3), target('p/light', 1)]);
    const random = seededRandom(42);
    let heavy = 0;
    for (let i = 0; i < 4_000; i++) {
      const plan = buildPlan(weighted, ctx({ random }));
      expect(plan).toHaveLength(2);
      if (plan[0]?.id === 'p/heavy') heavy++;
    }
    expect(heavy / 4_000).toBeGreaterThan(0.72);
    expect(heavy / 4_000).toBeLessThan(0.78);
  });

  it('least_busy picks the fewest in flight, ties in listed order', () => {
    const busy: Record<string, number> = { 'p/a': 3, 'p/b': 1, 'p/c': 1 };
    expect(ids(buildPlan(alias('least_busy', abc), ctx({ inFlight: (id) => busy[id] ?? 0 })))).toEqual(['p/b', 'p/a', 'p/c']);
    expect(ids(buildPlan(alias('least_busy', abc), ctx()))).toEqual(['p/a', 'p/b', 'p/c']);
  });

  it('returns a new array and leaves the alias alone', () => {
    const config = alias('round_robin', abc);
    const plan = buildPlan(config, ctx({ rotation: 2 }));
    plan.pop();
    expect(config.chain).toHaveLength(3);
    expect(buildPlan(alias('weighted', [target('p/only')]), ctx())).toHaveLength(1);
    expect(buildPlan(alias('weighted', []), ctx())).toEqual([]);
  });
});

describe('weightedIndex', () => {
  it('maps the random draw onto weight buckets', () => {
    expect(weightedIndex([3, 1], () => 0)).toBe(0);
    expect(weightedIndex([3, 1], () => 0.74)).toBe(0);
    expect(weightedIndex([3, 1], () => 0.76)).toBe(1);
    expect(weightedIndex([3, 1], () => 0.999_999_999)).toBe(1);
    expect(weightedIndex([0, 2], () => 0)).toBe(1);
    expect(weightedIndex([], () => 0)).toBe(-1);
  });
});
