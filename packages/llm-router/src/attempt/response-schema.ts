import { Ajv, type ValidateFunction } from 'ajv';
import { isPlainObject } from '../plain-object.js';
import { noAttempts, RouterError } from '../errors.js';
import { linearRegExp } from './linear-regexp.js';

/**
 * The JSON a request asked for (`response_format`), compiled once per distinct
 * schema. Validation uses Ajv (draft-07 plus `$defs`), without network access:
 * a `$ref` to anything outside the schema is an invalid schema.
 */
export type JsonExpectation = { readonly schema: ValidateFunction | undefined };

/** Distinct schemas kept compiled (least recently used goes first). */
const CACHE_ENTRIES = 128;
/** A schema whose JSON text is longer than this is compiled per request and never cached. */
const CACHE_MAX_KEY_CHARS = 64 * 1024; // 64 KiB

// strict: false — providers accept keywords Ajv's strict mode refuses (`strict`, `title` on refs, …);
// unknown keywords are then ignored, as the providers ignore them.
// regExp: patterns are matched in linear time (linear-regexp.ts says why).
const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false, code: { regExp: linearRegExp } });
const cache = new Map<string, ValidateFunction>();

/**
 * What the answer must be, from `response_format`: undefined when the request
 * did not ask for JSON. Throws RouterError('invalid_schema') when
 * `json_schema.schema` is not a schema Ajv can compile; nothing has been sent then.
 */
export function jsonExpectation(responseFormat: unknown, alias?: string): JsonExpectation | undefined {
  if (!isPlainObject(responseFormat)) return undefined;
  if (responseFormat.type === 'json_object') return NO_SCHEMA;
  if (responseFormat.type !== 'json_schema') return undefined;
  const spec = responseFormat.json_schema;
  const schema = isPlainObject(spec) ? spec.schema : undefined;
  if (schema === undefined) return NO_SCHEMA;
  if (!isPlainObject(schema) && typeof schema !== 'boolean') {
    throw invalidSchema('response_format.json_schema.schema must be a JSON Schema object', alias);
  }
  return { schema: compiled(schema, alias) };
}

const NO_SCHEMA: JsonExpectation = Object.freeze({ schema: undefined });

function invalidSchema(message: string, alias: string | undefined): RouterError {
  return new RouterError('invalid_schema', message, { outcome: noAttempts(alias), param: 'response_format' });
}

function compiled(schema: object | boolean, alias: string | undefined): ValidateFunction {
  const key = JSON.stringify(schema);
  const hit = cache.get(key);
  if (hit !== undefined) {
    cache.delete(key); // re-insert: Map order is the recency order
    cache.set(key, hit);
    return hit;
  }
  const validate = compile(schema, alias);
  if (key.length <= CACHE_MAX_KEY_CHARS) {
    cache.set(key, validate);
    if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  }
  return validate;
}

function compile(schema: object | boolean, alias: string | undefined): ValidateFunction {
  try {
    return ajv.compile(schema);
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'not a valid JSON Schema';
    throw invalidSchema(`response_format.json_schema.schema is not a valid JSON Schema: ${reason.slice(0, 300)}`, alias);
  } finally {
    // Ajv keeps every compiled schema in its own map (keyed by the object, and by `$id`):
    // drop it there, so caller-supplied schemas are held only by the bounded cache above
    // and a second request reusing an `$id` does not collide with the first.
    if (typeof schema === 'object') ajv.removeSchema(schema);
  }
}

/** How many compiled schemas are held (for the bound's test). */
export function cachedSchemaCount(): number {
  return cache.size;
}
