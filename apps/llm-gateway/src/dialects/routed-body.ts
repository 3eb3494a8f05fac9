/**
 * What every routed request body is first, whatever its inbound API: a JSON
 * object whose `model` is absent or a valid model id, else the 400 to answer
 * (the `Validation` each API's decoder returns, in its own error shape).
 * Shared by the decoders of every dialect (openai/validate-*.ts,
 * anthropic/decode-messages.ts, responses/decode-responses.ts).
 */
import { modelIdProblem } from '@mana/llm-router';
import type { GatewayErrorCode } from '../http/errors.js';
import { typeName } from '../http/refusal.js';
import { isPlainObject } from '../plain-object.js';

/**
 * The largest `max_tokens` (Messages) or `max_output_tokens` (Responses) taken: no model answers with more (the largest
 * output limits today are 128k tokens), and a larger one is a mistake to name,
 * not a budget to pass on (Anthropic itself refuses one above the model's limit).
 */
export const MAX_OUTPUT_TOKENS = 1_048_576; // 2^20 tokens

/** Why a routed request body is refused: a stable code from `Code`, a message, the parameter at fault. */
export interface ValidationError<Code extends GatewayErrorCode> {
  readonly code: Code;
  readonly message: string;
  readonly param: string | undefined;
}

/** A routed request body checked: the body to route, or the 400 to answer. */
export type Validation<Body, Code extends GatewayErrorCode> =
  | { readonly ok: true; readonly body: Body; readonly model: string | undefined; readonly stream: boolean }
  | { readonly ok: false; readonly error: ValidationError<Code> };

export interface ModelError {
  readonly code: Extract<GatewayErrorCode, 'invalid_request' | 'invalid_type' | 'invalid_model'>;
  readonly message: string;
  readonly param: 'model';
}

/** `model` of any routed request: absent, or a non-empty string that passes the router's model-id rule. */
export function modelError(model: unknown): ModelError | undefined {
  const error = (code: ModelError['code'], message: string): ModelError => ({ code, message, param: 'model' });
  if (model === undefined) return undefined;
  if (typeof model !== 'string') return error('invalid_type', `'model' must be a string, got ${typeName(model)}.`);
  if (model === '') return error('invalid_request', `'model' must not be empty.`);
  // Length and characters (see modelIdProblem): the id ends up in a response header and in logs.
  const problem = modelIdProblem(model);
  return problem === undefined ? undefined : error('invalid_model', `'model' ${problem}.`);
}

/** What every routed request body is first: a JSON object whose `model` passes `modelError`; else the 400 to answer. */
export function routedBody(
  value: unknown,
): { readonly ok: true; readonly body: Record<string, unknown>; readonly model: string | undefined } | { readonly ok: false; readonly error: ValidationError<'invalid_type' | ModelError['code']> } {
  if (!isPlainObject(value)) {
    return { ok: false, error: { code: 'invalid_type', message: `The request body must be a JSON object, got ${typeName(value)}.`, param: undefined } };
  }
  const badModel = modelError(value.model);
  if (badModel !== undefined) return { ok: false, error: badModel };
  return { ok: true, body: value, model: value.model as string | undefined };
}
