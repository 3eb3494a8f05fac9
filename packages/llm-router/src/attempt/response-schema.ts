import { Ajv, type ValidateFunction } from 'ajv';
import { isPlainObject } from '../plain-object.js';
import { noAttempts, RouterError } from '../errors.js';
import { linearRegExp, patternsCompiled } from './linear-regexp.js';

/**
 * The JSON a request asked for (`response_format`): `schema` is the JSON text
 * of `json_schema.schema`, undefined when any JSON will do (`json_object`, or
 * `json_schema` without a schema). The text is what schema-checker.ts compiles
 * and checks answers against, off the event loop.
 */
export type JsonExpectation = { readonly schema: string | undefined };

/** The largest schema checked, as JSON text; a larger one is `schema_too_large`. */
export const MAX_SCHEMA_CHARS = 64 * 1024; // 64 KiB
/**
 * The most JSON objects (`{…}`) a checked schema holds; more is `schema_too_large`.
 * Compile time grows with the number of subschemas rather than with the text
 * (64 KiB of `{"not": {}}` is ~6,000 of them: seconds), and Ajv nests the code
 * of sibling subschemas: past ~2,000 `anyOf` branches V8 runs out of stack
 * compiling it. Large real response schemas hold a few hundred.
 */
export const MAX_SCHEMA_OBJECTS = 1_000;

/**
 * What the answer must be, from `response_format`: undefined when the request
 * did not ask for JSON. Throws RouterError('invalid_schema') when
 * `json_schema.schema` is not an object or boolean, and
 * RouterError('schema_too_large') past the bounds above; nothing has been sent then.
 * Cheap: nothing is compiled here.
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
  // Counted first: it stops at the bound, where the text would be built whole.
  if (typeof schema === 'object' && objectsAbove(schema, MAX_SCHEMA_OBJECTS)) {
    throw tooLarge(`more than ${MAX_SCHEMA_OBJECTS} objects`, alias);
  }
  const text = JSON.stringify(schema);
  if (text.length > MAX_SCHEMA_CHARS) throw tooLarge(`${text.length} characters of JSON, more than ${MAX_SCHEMA_CHARS}`, alias);
  return { schema: text };
}

const NO_SCHEMA: JsonExpectation = Object.freeze({ schema: undefined });

export function invalidSchema(message: string, alias: string | undefined): RouterError {
  return new RouterError('invalid_schema', message, { outcome: noAttempts(alias), param: 'response_format' });
}

export function tooLarge(why: string, alias: string | undefined): RouterError {
  return new RouterError('schema_too_large', `response_format.json_schema.schema is too large to check answers against: ${why}`, {
    outcome: noAttempts(alias),
    param: 'response_format',
  });
}

/** True when `value` holds more than `max` objects (arrays not counted); stops counting there. */
function objectsAbove(value: object, max: number): boolean {
  const pending: object[] = [value];
  let objects = 0;
  while (pending.length > 0) {
    const next = pending.pop()!;
    if (!Array.isArray(next) && ++objects > max) return true;
    for (const item of Array.isArray(next) ? next : Object.values(next)) {
      if (typeof item === 'object' && item !== null) pending.push(item);
    }
  }
  return false;
}

/**
 * Compiled schemas live in generations: one Ajv instance and the validators it
 * compiled. A generation takes this many compiles (failed ones included), this
 * much schema text or this many patterns, then a fresh one replaces it: a few
 * tens of MB at most (a schema at the bounds compiles to 1–2 MB, 7 MB with a
 * pattern in each of its 1,000 objects; an RE2 program holds ~9 KB).
 *
 * Why generations and not one shared Ajv with `removeSchema`: Ajv keeps what it
 * generates for every schema it compiled in the instance's scope for the
 * instance's lifetime, and every validator holds the instance, so an evicted
 * schema was never freed (3,000 distinct 20 KB schemas: +1 GB). Dropping a
 * whole generation frees it all once nothing uses its validators any more.
 */
const GENERATION_COMPILES = 128;
const GENERATION_CHARS = 256 * 1024; // 256 KiB of schema text: four schemas at the bound
const GENERATION_PATTERNS = 2_000;

// strict: false — providers accept keywords Ajv's strict mode refuses (`strict`, `title` on refs, …);
// unknown keywords are then ignored, as the providers ignore them.
// logger: false — Ajv would print the whole generated function to stderr when V8 refuses it.
// optimize: false — Ajv's optimisation passes are quadratic in the generated code (2,000
// properties: ~2.7 s with, ~0.3 s without); validating an answer is cheap either way.
// loopEnum / loopRequired — long `enum` and `required` lists become one loop instead of
// one generated comparison per entry.
function freshAjv(): Ajv {
  return new Ajv({
    strict: false,
    allErrors: false,
    validateFormats: false,
    logger: false,
    loopEnum: 16,
    loopRequired: 16,
    code: { optimize: false, regExp: linearRegExp },
  });
}

class Generation {
  readonly ajv = freshAjv();
  readonly validators = new Map<string, ValidateFunction>();
  private readonly patternsBefore = patternsCompiled();
  compiles = 0;
  chars = 0;

  full(): boolean {
    return (
      this.compiles >= GENERATION_COMPILES ||
      this.chars >= GENERATION_CHARS ||
      patternsCompiled() - this.patternsBefore >= GENERATION_PATTERNS
    );
  }
}

let generation = new Generation();

/** The schema (JSON text from `jsonExpectation`) compiled, or why it is not a valid JSON Schema. */
export function compileSchema(text: string): ValidateFunction | string {
  const hit = generation.validators.get(text);
  if (hit !== undefined) return hit;
  if (generation.full()) generation = new Generation();
  const current = generation;
  current.compiles++;
  current.chars += text.length;
  const schema = JSON.parse(text) as object | boolean;
  try {
    const validate = current.ajv.compile(schema);
    // V8 compiles the generated function on its first call: a failure there (nesting
    // past the stack) is found now, as an invalid schema, not later on an answer.
    validate(null);
    current.validators.set(text, validate);
    return validate;
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'not a valid JSON Schema';
    return `response_format.json_schema.schema is not a valid JSON Schema: ${reason.slice(0, 300)}`;
  } finally {
    // Ajv also registers each schema by object and by `$id`: drop that, so a second
    // request reusing an `$id` within the same generation does not collide with the first.
    if (typeof schema === 'object') current.ajv.removeSchema(schema);
  }
}

/** Why `content` is not the JSON asked for, or undefined when it is. Never echoes the content. */
export function answerProblem(schema: string | undefined, content: unknown): string | undefined {
  if (typeof content !== 'string') return 'no text content where JSON was asked for';
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return 'content is not JSON';
  }
  if (schema === undefined) return undefined;
  const validate = compileSchema(schema);
  if (typeof validate === 'string') return validate;
  try {
    if (validate(value)) return undefined;
  } catch (error) {
    // e.g. the stack exhausted on a deeply nested answer: it could not be shown to match.
    return `the answer could not be checked against the response schema: ${error instanceof Error ? error.message.slice(0, 200) : 'failed'}`;
  }
  const first = validate.errors?.[0];
  const where = first === undefined ? '' : `: ${first.instancePath === '' ? '(root)' : first.instancePath} ${first.message ?? 'is invalid'}`;
  return `content does not match the response schema${where.slice(0, 200)}`;
}

/** How many compiled schemas the current generation holds (for the bound's test). */
export function cachedSchemaCount(): number {
  return generation.validators.size;
}
