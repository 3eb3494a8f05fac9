import { describe, expect, it } from 'vitest';
import { isRouterError } from '../errors.js';
import { cachedSchemaCount, jsonExpectation } from './response-schema.js';

const format = (schema: unknown) => ({ type: 'json_schema', json_schema: { name: 'x', schema } });

describe('jsonExpectation', () => {
  it('no JSON asked for → undefined; json_object or a schema-less json_schema → parse only', () => {
    expect(jsonExpectation(undefined)).toBeUndefined();
    expect(jsonExpectation({ type: 'text' })).toBeUndefined();
    expect(jsonExpectation({ type: 'json_object' })).toEqual({ schema: undefined });
    expect(jsonExpectation({ type: 'json_schema', json_schema: { name: 'x' } })).toEqual({ schema: undefined });
  });

  it('compiles a schema once: the same schema text in a later request reuses the validator', () => {
    const first = jsonExpectation(format({ type: 'object', required: ['a'] }))!.schema!;
    const second = jsonExpectation(format({ type: 'object', required: ['a'] }))!.schema!;
    expect(second).toBe(first);
    expect(first({ a: 1 })).toBe(true);
    expect(first({})).toBe(false);
  });

  it('keeps at most 128 compiled schemas, whatever callers send', () => {
    for (let i = 0; i < 300; i++) jsonExpectation(format({ type: 'object', properties: { [`p${i}`]: { type: 'string' } } }));
    expect(cachedSchemaCount()).toBe(128);
  });

  it('two requests may use the same $id (nothing is registered globally)', () => {
    const a = jsonExpectation(format({ $id: 'https://example.com/s', type: 'string' }))!.schema!;
    const b = jsonExpectation(format({ $id: 'https://example.com/s', type: 'number' }))!.schema!;
    expect(a('x')).toBe(true);
    expect(b(1)).toBe(true);
  });

  it.each([
    ['an unknown type', { type: 'objekt' }],
    ['required not a list', { type: 'object', required: 'a' }],
    ['a $ref outside the schema', { $ref: 'https://example.com/other.json' }],
    ['a schema that is a string', 'object'],
  ])('%s → invalid_schema', (_name, schema) => {
    let error: unknown;
    try {
      jsonExpectation(format(schema));
    } catch (e) {
      error = e;
    }
    expect(isRouterError(error) && error.code).toBe('invalid_schema');
  });
});
