/**
 * The schema checker as the gateway runs it: on the built worker (`dist/`,
 * built before tests by turbo). From the sources it runs jobs in place.
 */
import { describe, expect, it } from 'vitest';
import { createSchemaChecker as inPlace } from './schema-checker.js';

type Module = typeof import('./schema-checker.js');
const built = (await import(new URL('../../dist/attempt/schema-checker.js', import.meta.url).href)) as Module;

/**
 * Within the bounds (62 KB, 992 objects) and ~0.4 s of CPU to compile: 990
 * subschemas, and an `enum` of 6,000 values that Ajv's check of the schema
 * itself compares pairwise.
 */
const HEAVY = JSON.stringify({
  anyOf: [...Array.from({ length: 990 }, () => ({ type: 'null' })), { enum: Array.from({ length: 6_000 }, (_, i) => `v${i}`) }],
});

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

  it('a job past its budget ends with the worker; the jobs queued behind it run on a fresh one', async () => {
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
