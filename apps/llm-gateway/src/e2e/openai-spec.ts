/**
 * OpenAI's published OpenAPI description as JSON Schema 2020-12 validators, for
 * tests that check what the gateway writes against what clients generated from
 * that spec (Java, Go, Rust) expect. The copy is pinned in
 * `fixtures/openai-openapi.json.gz` (openai/openai-openapi `openapi.json`,
 * commit f85dbe2 of 2026-08-21, MIT: `fixtures/openai-openapi.LICENSE`), so a
 * fresh clone needs no network.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

const SPEC_FILE = new URL('./fixtures/openai-openapi.json.gz', import.meta.url);
const COMPONENTS = '#/components/schemas/';
const SPEC_ID = 'https://mana.invalid/openai-openapi.json';

/**
 * The spec's schemas as 2020-12 JSON Schema. Two rewrites: OpenAPI 3.0's
 * `nullable: true`, which the file still uses in places, becomes "this, or
 * null" (an `anyOf`, so an `enum` or `$ref` beside it allows null too); and
 * `#/components/schemas/X` references point into `$defs`.
 */
function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'nullable') continue;
    out[key] = key === '$ref' && typeof value === 'string' && value.startsWith(COMPONENTS) ? `#/$defs/${value.slice(COMPONENTS.length)}` : toJsonSchema(value);
  }
  return (node as Record<string, unknown>).nullable === true ? { anyOf: [out, { type: 'null' }] } : out;
}

let ajv: Ajv2020 | undefined;

function specAjv(): Ajv2020 {
  if (ajv !== undefined) return ajv;
  const spec = JSON.parse(gunzipSync(readFileSync(SPEC_FILE)).toString('utf8')) as { components: { schemas: Record<string, unknown> } };
  // strict: false — the spec carries OpenAPI annotations (`discriminator`, `x-oaiMeta`, `example`) that are not JSON Schema keywords;
  // validateFormats: false — its formats (`unixtime`, `float`) are descriptions, not checks Ajv knows;
  // validateSchema: false — schemas no answer here uses still hold OpenAPI 3.0 leftovers the 2020-12
  // meta-schema refuses (`exclusiveMinimum: true`, a boolean `$recursiveAnchor`, a duplicated `required` item).
  ajv = new Ajv2020({ strict: false, validateFormats: false, validateSchema: false, allErrors: true });
  ajv.addSchema({ $id: SPEC_ID, $defs: toJsonSchema(spec.components.schemas) });
  return ajv;
}

/** A validator for one of the spec's `components.schemas` (e.g. `CreateChatCompletionResponse`). */
export function specSchema(name: string): ValidateFunction {
  const validate = specAjv().getSchema(`${SPEC_ID}#/$defs/${name}`);
  if (validate === undefined) throw new Error(`the OpenAI spec has no schema ${name}`);
  return validate;
}

/** What `value` does wrong against the spec's schema `name`: `[]` when it conforms, else one line per error. */
export function specViolations(name: string, value: unknown): string[] {
  const validate = specSchema(name);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e: ErrorObject) => `${e.instancePath || '/'} ${e.message ?? e.keyword} (${e.schemaPath})`);
}
