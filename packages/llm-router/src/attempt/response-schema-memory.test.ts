/**
 * Compiled response schemas are bounded in memory, not only in count: the heap
 * after a full collection grows by a bounded amount however many distinct
 * schemas requests bring. (A cache of 128 entries on one shared Ajv instance
 * bounded only the count: Ajv kept every schema it ever compiled.)
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load-config.js';
import { otherAliases } from '../config/test-configs.js';
import { createRouter } from '../router.js';
import { useFakePair } from '../test-support.js';

// A collection on demand without starting the test runner with --expose-gc.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

const ALIAS = 'mana/structured';
const fakes = useFakePair();

/** A distinct ~4 KB schema per `i`: 10 string properties with a pattern each, and a long description. */
function schemaOf(i: number): Record<string, unknown> {
  const properties = Object.fromEntries(Array.from({ length: 10 }, (_, j) => [`p${i}_${j}`, { type: 'string', pattern: `^v${i}_${j}[a-z]*$` }]));
  return { type: 'object', description: `form ${i}: ${'what each field holds. '.repeat(150)}`, properties };
}

function heapAfterCollection(): number {
  collect();
  collect();
  return process.memoryUsage().heapUsed;
}

describe('response schema memory', () => {
  it('1,000 requests with distinct schemas grow the heap by a bounded amount', { timeout: 120_000 }, async () => {
    fakes.a.on('*', { kind: 'answer', content: '{}' });
    const config = `
providers:
  a: { type: openai, base_url: "${fakes.a.baseUrl}", api_key: "ka" }
aliases:
  ${ALIAS}:
    fail_over_on: [invalid_json]
    chain: [a/m1]
${otherAliases(ALIAS)}`;
    const router = fakes.use(createRouter({ config: parseConfig(config, { source: 'test', env: {} }) }));
    const ask = async (i: number) => {
      const result = await router.execute({
        model: ALIAS,
        body: { model: ALIAS, messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_schema', json_schema: { name: 's', schema: schemaOf(i) } } },
        stream: false,
      });
      expect(result.outcome.target).toBe('a/m1');
    };
    for (let i = 0; i < 150; i++) await ask(i); // warm: sockets, JIT, a first generation of schemas
    const before = heapAfterCollection();
    for (let i = 150; i < 1_150; i++) await ask(i);
    const grown = heapAfterCollection() - before;
    // Bounded: at most one generation of these schemas is held (under 9 MB); unbounded, 1,000 of them held ~40 MB more.
    expect(grown).toBeLessThan(16 * 1024 * 1024);
  });
});
