/**
 * Validation of an embeddings request body (OpenAI shape). Pure and cheap, like
 * validate-chat.ts (whose start, `routedBody`, it shares): a bad `input` gets a 400 with a stable code here instead of
 * an upstream error, a wasted call, or vectors the caller cannot line up.
 */
import type { EmbeddingRequestBody } from '@mana/llm-router';
import { typeName } from '../../http/refusal.js';
import { routedBody, type Validation, type ValidationError } from '../routed-body.js';

export type EmbeddingValidationError = ValidationError<'invalid_request' | 'invalid_type' | 'invalid_model' | 'empty_input'>;

/** Embeddings never stream: `stream` is always false on success. */
export type EmbeddingValidation = Validation<EmbeddingRequestBody, EmbeddingValidationError['code']>;

const ENCODINGS = new Set(['float', 'base64']);
/** Optional fields where `null` means "not given": dropped before routing (the router and upstreams expect them absent). */
const OPTIONAL_FIELDS = ['encoding_format', 'dimensions', 'user'] as const;

function fail(code: EmbeddingValidationError['code'], message: string, param?: string): EmbeddingValidation {
  return { ok: false, error: { code, message, param } };
}

const isToken = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** `input`: a non-empty string, or a non-empty array of non-empty strings, of tokens, or of non-empty token arrays. */
function validateInput(input: unknown): EmbeddingValidation | undefined {
  const shape = `'input' must be a non-empty string, an array of non-empty strings, an array of tokens or an array of token arrays`;
  if (input === undefined || input === null) return fail('empty_input', `${shape}; it is missing.`, 'input');
  if (typeof input === 'string') return input === '' ? fail('empty_input', `'input' must not be an empty string.`, 'input') : undefined;
  if (!Array.isArray(input)) return fail('invalid_type', `${shape}, got ${typeName(input)}.`, 'input');
  if (input.length === 0) return fail('empty_input', `'input' must not be an empty array.`, 'input');
  // A flat array of numbers is one token array.
  if (typeof input[0] === 'number') {
    const bad = input.findIndex((v) => !isToken(v));
    return bad === -1 ? undefined : fail('invalid_type', `input[${bad}] must be a token (a whole number ≥ 0), got ${typeName(input[bad])}.`, `input[${bad}]`);
  }
  const strings = typeof input[0] === 'string';
  for (let i = 0; i < input.length; i++) {
    const item: unknown = input[i];
    const param = `input[${i}]`;
    if (strings) {
      if (typeof item !== 'string') return fail('invalid_type', `${param} must be a string like input[0], got ${typeName(item)}.`, param);
      if (item === '') return fail('empty_input', `${param} must not be an empty string.`, param);
      continue;
    }
    if (!Array.isArray(item)) return fail('invalid_type', `${param} must be a string or a token array, got ${typeName(item)}.`, param);
    if (item.length === 0) return fail('empty_input', `${param} must not be an empty token array.`, param);
    const bad = item.findIndex((v) => !isToken(v));
    if (bad !== -1) return fail('invalid_type', `${param}[${bad}] must be a token (a whole number ≥ 0), got ${typeName(item[bad])}.`, `${param}[${bad}]`);
  }
  return undefined;
}

export function validateEmbeddingRequest(value: unknown): EmbeddingValidation {
  const routed = routedBody(value);
  if (!routed.ok) return routed;
  const { body, model } = routed;
  const bad = validateInput(body.input);
  if (bad !== undefined) return bad;
  const encoding = body.encoding_format;
  if (encoding !== undefined && encoding !== null && (typeof encoding !== 'string' || !ENCODINGS.has(encoding))) {
    return fail('invalid_request', `'encoding_format' must be "float" or "base64".`, 'encoding_format');
  }
  const dimensions = body.dimensions;
  if (dimensions !== undefined && dimensions !== null && !(typeof dimensions === 'number' && Number.isInteger(dimensions) && dimensions > 0)) {
    return fail('invalid_type', `'dimensions' must be a whole number > 0, got ${JSON.stringify(dimensions)?.slice(0, 40) ?? typeName(dimensions)}.`, 'dimensions');
  }
  if (body.user !== undefined && body.user !== null && typeof body.user !== 'string') return fail('invalid_type', `'user' must be a string, got ${typeName(body.user)}.`, 'user');
  if (body.stream === true) return fail('invalid_request', `Embeddings do not stream: leave out 'stream'.`, 'stream');
  // Nesting depth was checked on the raw text before parsing (json-depth.ts).
  // `null` optional fields mean "not given"; the router and upstreams expect them absent.
  // The body itself when nothing is dropped: then its text can be passed through as written.
  let clean: Record<string, unknown> = body;
  for (const key of OPTIONAL_FIELDS) {
    if (clean[key] !== null) continue;
    if (clean === body) clean = { ...body };
    delete clean[key];
  }
  return { ok: true, body: clean as EmbeddingRequestBody, model, stream: false };
}
