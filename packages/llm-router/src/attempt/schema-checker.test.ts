/**
 * The schema checker as the gateway runs it: on the built worker (`dist/`,
 * built before tests by turbo). From the sources it runs jobs in place.
 */
import { describe, expect, it } from 'vitest';
import { createSchemaChecker as inPlace, type SchemaChecker, type SchemaOutcome } from './schema-checker.js';

type Module = typeof import('./schema-checker.js');
const built = (await import(new URL('../../dist/attempt/schema-checker.js', import.meta.url).href)) as Module;

/**
 * Within the bounds (62 KB, 992 objects) and ~0.4 s of CPU to compile: 990
 * subschemas, and an `enum` of 6,000 values that Ajv's check of the schema
 * itself compares pairwise.
 */
const HEAVY = heavy(0);

/** HEAVY, different per `seed`, so no job finds another's schema compiled. */
function heavy(seed: number): string {
  return JSON.stringify({
    anyOf: [...Array.from({ length: 990 }, () => ({ type: 'null' })), { enum: Array.from({ length: 6_000 }, (_, i) => `v${seed}-${i}`) }],
  });
}

const TRIVIAL = '{"type":"object"}';

/**
 * For the tests of order and bounds: a budget no job reaches even on a loaded
 * machine, so every job's outcome is `ok` and only the order is asserted.
 */
const NO_BUDGET = 120_000; // 2 min
const SLOW_TEST = { timeout: 180_000 };

/** Starts both workers of a two-worker checker (one job each of two callers), so no test's order depends on start-up times. */
async function warmTwo(checker: SchemaChecker): Promise<void> {
  await Promise.all([checker.run({ kind: 'prepare', schema: TRIVIAL }, { caller: 'x' }), checker.run({ kind: 'prepare', schema: TRIVIAL }, { caller: 'y' })]);
}

describe('schema checker', () => {
  it('compiles and checks on the worker: a valid answer, a mismatch, an invalid schema', async () => {
    const checker = built.createSchemaChecker();
    try {
      const schema = '{"type":"object","required":["city"]}';
      expect(await checker.run({ kind: 'prepare', schema })).toEqual({ ok: true, problem: undefined });
      expect(await checker.run({ kind: 'check', schema, content: '{"city":"Berlin"}' })).toEqual({ ok: true, problem: undefined });
      expect(await checker.run({ kind: 'check', schema, content: '{}' })).toEqual({
        ok: true,
        problem: "content does not match the response schema: (root) must have required property 'city'",
      });
      const invalid = await checker.run({ kind: 'prepare', schema: '{"type":"objekt"}' });
      expect(invalid.ok && invalid.problem).toMatch(/is not a valid JSON Schema/);
    } finally {
      await checker.close();
    }
  });

  it('a job past its budget ends with the worker; the jobs queued behind it run on a fresh one', SLOW_TEST, async () => {
    const checker = built.createSchemaChecker({ budgetMs: 100 });
    try {
      const [slow, after] = await Promise.all([
        checker.run({ kind: 'prepare', schema: HEAVY }),
        checker.run({ kind: 'check', schema: '{"type":"string"}', content: '"fine"' }),
      ]);
      expect(slow).toEqual({ ok: false, why: 'took longer than 0.1 s' });
      expect(after).toEqual({ ok: true, problem: undefined });
    } finally {
      await checker.close();
    }
  });

  it("one caller's backlog does not delay another caller: its job starts on the worker that caller cannot take", SLOW_TEST, async () => {
    const checker = built.createSchemaChecker({ workers: 2, budgetMs: NO_BUDGET });
    try {
      await warmTwo(checker);
      const finished: string[] = [];
      const note = (name: string) => (outcome: SchemaOutcome) => {
        finished.push(name);
        return outcome;
      };
      const backlog = Array.from({ length: 3 }, (_, i) => checker.run({ kind: 'prepare', schema: heavy(i + 1) }, { caller: 'busy' }).then(note(`busy-${i}`)));
      const other = await checker.run({ kind: 'prepare', schema: TRIVIAL }, { caller: 'other' }).then(note('other'));
      expect(other).toEqual({ ok: true, problem: undefined });
      // The busy caller runs one job at a time (workers − 1): the other's ended before its first.
      expect(finished).toEqual(['other']);
      const all = await Promise.all(backlog);
      expect(all.every((outcome) => outcome.ok)).toBe(true);
      expect(finished).toEqual(['other', 'busy-0', 'busy-1', 'busy-2']);
    } finally {
      await checker.close();
    }
  });

  it('with one worker, another caller waits for the running job and one more of the busy caller, not its whole backlog', SLOW_TEST, async () => {
    const checker = built.createSchemaChecker({ workers: 1, budgetMs: NO_BUDGET });
    try {
      const finished: string[] = [];
      const backlog = Array.from({ length: 4 }, (_, i) =>
        checker.run({ kind: 'prepare', schema: heavy(i + 10) }, { caller: 'busy' }).then(() => finished.push(`busy-${i}`)),
      );
      await checker.run({ kind: 'prepare', schema: TRIVIAL }, { caller: 'other' }).then(() => finished.push('other'));
      await Promise.all(backlog);
      expect(finished).toEqual(['busy-0', 'busy-1', 'other', 'busy-2', 'busy-3']);
    } finally {
      await checker.close();
    }
  });

  it("refuses a caller's prepare past its queue bound (others still queue); a check is never refused", SLOW_TEST, async () => {
    const checker = built.createSchemaChecker({ workers: 2, maxQueuedPerCaller: 1, maxQueued: 2, budgetMs: NO_BUDGET });
    try {
      const running = checker.run({ kind: 'prepare', schema: heavy(20) }, { caller: 'busy' });
      const waiting = checker.run({ kind: 'prepare', schema: heavy(21) }, { caller: 'busy' });
      expect(await checker.run({ kind: 'prepare', schema: TRIVIAL }, { caller: 'busy' })).toEqual({
        ok: false,
        busy: 'caller',
        why: 'was not run: this caller has too many schema jobs waiting',
      });
      // Its answer was paid for: a check goes in past the bound, and counts against everyone's.
      const check = checker.run({ kind: 'check', schema: TRIVIAL, content: '{}' }, { caller: 'busy' });
      expect(await checker.run({ kind: 'prepare', schema: TRIVIAL }, { caller: 'other' })).toEqual({
        ok: false,
        busy: 'total',
        why: 'was not run: too many schema jobs are waiting',
      });
      expect(await Promise.all([running, waiting, check])).toEqual([
        { ok: true, problem: undefined },
        { ok: true, problem: undefined },
        { ok: true, problem: undefined },
      ]);
      expect(await checker.run({ kind: 'prepare', schema: TRIVIAL }, { caller: 'other' })).toEqual({ ok: true, problem: undefined });
    } finally {
      await checker.close();
    }
  });

  it('a waiting job whose request goes away leaves the queue at once', SLOW_TEST, async () => {
    const checker = built.createSchemaChecker({ workers: 1, budgetMs: NO_BUDGET });
    try {
      const running = checker.run({ kind: 'prepare', schema: heavy(30) }, { caller: 'a' });
      const gone = new AbortController();
      const waiting = checker.run({ kind: 'prepare', schema: heavy(31) }, { caller: 'a', signal: gone.signal });
      let runningDone = false;
      void running.then(() => (runningDone = true));
      gone.abort();
      expect(await waiting).toEqual({ ok: false, why: 'was not run: the request was aborted' });
      expect(runningDone).toBe(false);
      expect(await running).toEqual({ ok: true, problem: undefined });
    } finally {
      await checker.close();
    }
  });

  it('after close, jobs end as not run', async () => {
    const checker = built.createSchemaChecker();
    await checker.close();
    expect(await checker.run({ kind: 'prepare', schema: '{}' })).toEqual({ ok: false, why: 'was not run: the router is closed' });
  });

  it('from the sources (no built worker) jobs run in place', async () => {
    const checker = inPlace();
    expect(await checker.run({ kind: 'check', schema: undefined, content: 'not json' })).toEqual({ ok: true, problem: 'content is not JSON' });
  });
});
