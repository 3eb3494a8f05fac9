import { describe, expect, it } from 'vitest';
import { isRouterError } from '../errors.js';
import { answerProblem, cachedSchemaCount, compileSchema, jsonExpectation, MAX_SCHEMA_CHARS, MAX_SCHEMA_OBJECTS } from './response-schema.js';

const format = (schema: unknown) => ({ type: 'json_schema', json_schema: { name: 'x', schema } });

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('jsonExpectation', () => {
  it('no JSON asked for → undefined; json_object or a schema-less json_schema → parse only; a schema → its JSON text', () => {
    expect(jsonExpectation(undefined)).toBeUndefined();
    expect(jsonExpectation({ type: 'text' })).toBeUndefined();
    expect(jsonExpectation({ type: 'json_object' })).toEqual({ schema: undefined });
    expect(jsonExpectation({ type: 'json_schema', json_schema: { name: 'x' } })).toEqual({ schema: undefined });
    expect(jsonExpectation(format({ type: 'object' }))).toEqual({ schema: '{"type":"object"}' });
  });

  it('a schema that is not an object → invalid_schema', () => {
    const error = thrown(() => jsonExpectation(format('object')));
    expect(isRouterError(error) && error.code).toBe('invalid_schema');
  });

  it.each([
    ['over 64 KiB of JSON text', { type: 'object', description: 'x'.repeat(MAX_SCHEMA_CHARS) }, /characters of JSON, more than 65536/],
    ['over 1,000 objects', { anyOf: Array.from({ length: MAX_SCHEMA_OBJECTS }, () => ({ type: 'null' })) }, /more than 1000 objects/],
  ])('%s → schema_too_large naming response_format', (_name, schema, message) => {
    const error = thrown(() => jsonExpectation(format(schema)));
    expect(isRouterError(error) && { code: error.code, param: error.param }).toEqual({ code: 'schema_too_large', param: 'response_format' });
    expect((error as Error).message).toMatch(message);
  });

  it('right at the bounds is accepted', () => {
    const objects = { anyOf: Array.from({ length: MAX_SCHEMA_OBJECTS - 1 }, () => ({})) };
    expect(jsonExpectation(format(objects))?.schema).toBeDefined();
    const text = { description: 'x'.repeat(MAX_SCHEMA_CHARS - '{"description":""}'.length) };
    expect(jsonExpectation(format(text))?.schema).toHaveLength(MAX_SCHEMA_CHARS);
  });
});

describe('compileSchema', () => {
  it('compiles a schema once: the same schema text in a later request reuses the validator', () => {
    const first = compileSchema('{"type":"object","required":["a"]}');
    const second = compileSchema('{"type":"object","required":["a"]}');
    expect(second).toBe(first);
    expect(typeof first === 'function' && first({ a: 1 })).toBe(true);
    expect(typeof first === 'function' && first({})).toBe(false);
  });

  it('keeps at most 128 compiled schemas, whatever callers send', () => {
    for (let i = 0; i < 300; i++) compileSchema(JSON.stringify({ type: 'object', properties: { [`p${i}`]: { type: 'string' } } }));
    expect(cachedSchemaCount()).toBeGreaterThan(0);
    expect(cachedSchemaCount()).toBeLessThanOrEqual(128);
  });

  it('two requests may use the same $id (nothing is registered globally)', () => {
    const a = compileSchema('{"$id":"https://example.com/s","type":"string"}');
    const b = compileSchema('{"$id":"https://example.com/s","type":"number"}');
    expect(typeof a === 'function' && a('x')).toBe(true);
    expect(typeof b === 'function' && b(1)).toBe(true);
  });

  it.each([
    ['an unknown type', { type: 'objekt' }],
    ['required not a list', { type: 'object', required: 'a' }],
    ['a $ref outside the schema', { $ref: 'https://example.com/other.json' }],
  ])('%s → why it is not a valid JSON Schema', (_name, schema) => {
    expect(compileSchema(JSON.stringify(schema))).toMatch(/^response_format\.json_schema\.schema is not a valid JSON Schema: /);
  });

  it('a pattern RE2 cannot match in linear time (lookahead, backreference) is refused, saying so', () => {
    expect(compileSchema('{"type":"string","pattern":"^(?=a)a+$"}')).toMatch(/pattern "\^\(\?=a\)a\+\$" is not supported: patterns are matched with RE2/);
    expect(compileSchema('{"type":"string","pattern":"(a)\\\\1"}')).toMatch(/is not supported: patterns are matched with RE2/);
  });

  it('JavaScript pattern spellings still work: \\u escapes, named groups, \\d, anchors, patternProperties', () => {
    const v = compileSchema(
      JSON.stringify({
        type: 'object',
        properties: { word: { type: 'string', pattern: '^caf\\u00e9(?<n>\\d+)$' } },
        patternProperties: { '^x-[a-z]+$': { type: 'number' } },
      }),
    );
    expect(typeof v).toBe('function');
    const validate = v as Exclude<typeof v, string>;
    expect(validate({ word: 'café12', 'x-a': 1 })).toBe(true);
    expect(validate({ word: 'cafe12' })).toBe(false);
    expect(validate({ 'x-a': 'one' })).toBe(false);
  });
});

describe('answerProblem', () => {
  it('not text, not JSON, or not matching the schema: says which, without echoing the content', () => {
    expect(answerProblem(undefined, null)).toBe('no text content where JSON was asked for');
    expect(answerProblem(undefined, 'Sure! {"a": 1}')).toBe('content is not JSON');
    expect(answerProblem(undefined, '{"a": 1}')).toBeUndefined();
    expect(answerProblem('{"type":"object","required":["city"]}', '{"town": "secret"}')).toBe(
      "content does not match the response schema: (root) must have required property 'city'",
    );
  });

  it('a backtracking pattern against a long near-match answers at once (RE2 is linear)', () => {
    const started = performance.now();
    expect(answerProblem('{"type":"string","pattern":"^(a+)+$"}', JSON.stringify(`${'a'.repeat(50_000)}!`))).toMatch(
      /content does not match the response schema: \(root\) must match pattern/,
    );
    expect(answerProblem('{"type":"string","pattern":"^(a+)+$"}', JSON.stringify('a'.repeat(50_000)))).toBeUndefined();
    // JavaScript's RegExp needs minutes for 30 `a`s and a `!`.
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
