/**
 * Validation of a chat completion request body. Pure and cheap: checks the shape
 * the gateway and router rely on, and the types of the common fields, so a bad
 * request gets a 400 with a stable code instead of a confusing upstream error.
 * Everything else is passed through untouched.
 */
import { modelIdProblem, type ChatRequestBody } from '@mana/llm-router';
import type { GatewayErrorCode } from './errors.js';
import { isPlainObject } from '../plain-object.js';

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

export type ChatValidationError = ValidationError<'invalid_request' | 'missing_messages' | 'invalid_type' | 'invalid_model'>;

export type ChatValidation = Validation<ChatRequestBody, ChatValidationError['code']>;

/**
 * Deeper JSON than this is refused, before it is parsed (see json-depth.ts;
 * also protects JSON.stringify further down from stack overflow).
 */
export const MAX_JSON_DEPTH = 64;


const NUMBER_FIELDS = [
  'temperature',
  'top_p',
  'max_tokens',
  'max_completion_tokens',
  'n',
  'presence_penalty',
  'frequency_penalty',
  'seed',
  'top_logprobs',
] as const;
const BOOLEAN_FIELDS = ['stream', 'logprobs', 'parallel_tool_calls'] as const;
const OBJECT_FIELDS = ['stream_options', 'response_format', 'metadata', 'logit_bias'] as const;
const ROLES = new Set(['system', 'user', 'assistant', 'tool', 'function', 'developer']);

function fail(code: ChatValidationError['code'], message: string, param?: string): ChatValidation {
  return { ok: false, error: { code, message, param } };
}


/** A JSON value's type as messages name it (`null`, `array`, `object`, …). */
export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function validateMessage(message: unknown, index: number): ChatValidation | undefined {
  const param = `messages[${index}]`;
  if (!isPlainObject(message)) {
    return fail('invalid_type', `${param} must be an object, got ${typeName(message)}.`, param);
  }
  const role = message.role;
  if (typeof role !== 'string') {
    return fail(
      role === undefined ? 'invalid_request' : 'invalid_type',
      role === undefined ? `${param}.role is required.` : `${param}.role must be a string, got ${typeName(role)}.`,
      `${param}.role`,
    );
  }
  if (!ROLES.has(role)) {
    return fail('invalid_request', `${param}.role must be one of ${[...ROLES].join(', ')}; got '${role.slice(0, 40)}'.`, `${param}.role`);
  }
  const content = message.content;
  if (content !== undefined && content !== null && typeof content !== 'string' && !Array.isArray(content)) {
    return fail('invalid_type', `${param}.content must be a string, an array of parts or null, got ${typeName(content)}.`, `${param}.content`);
  }
  if (Array.isArray(content)) {
    for (let i = 0; i < content.length; i++) {
      const part = content[i];
      if (!isPlainObject(part) || typeof part.type !== 'string') {
        return fail('invalid_type', `${param}.content[${i}] must be an object with a string 'type'.`, `${param}.content[${i}]`);
      }
    }
  }
  if (message.tool_calls !== undefined && message.tool_calls !== null && !Array.isArray(message.tool_calls)) {
    return fail('invalid_type', `${param}.tool_calls must be an array, got ${typeName(message.tool_calls)}.`, `${param}.tool_calls`);
  }
  return undefined;
}

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

export function validateChatRequest(value: unknown): ChatValidation {
  const routed = routedBody(value);
  if (!routed.ok) return routed;
  const { body, model } = routed;

  const messages = body.messages;
  if (messages === undefined || messages === null) {
    return fail('missing_messages', `'messages' is required: a non-empty array of chat messages.`, 'messages');
  }
  if (!Array.isArray(messages)) {
    return fail('invalid_type', `'messages' must be an array, got ${typeName(messages)}.`, 'messages');
  }
  if (messages.length === 0) {
    return fail('missing_messages', `'messages' must contain at least one message.`, 'messages');
  }
  for (let i = 0; i < messages.length; i++) {
    const bad = validateMessage(messages[i], i);
    if (bad) return bad;
  }

  for (const field of BOOLEAN_FIELDS) {
    const v = body[field];
    if (v !== undefined && v !== null && typeof v !== 'boolean') {
      return fail('invalid_type', `'${field}' must be a boolean, got ${typeName(v)}.`, field);
    }
  }
  for (const field of NUMBER_FIELDS) {
    const v = body[field];
    if (v !== undefined && v !== null && (typeof v !== 'number' || !Number.isFinite(v))) {
      return fail('invalid_type', `'${field}' must be a number, got ${typeName(v)}.`, field);
    }
  }
  for (const field of OBJECT_FIELDS) {
    const v = body[field];
    if (v !== undefined && v !== null && !isPlainObject(v)) {
      return fail('invalid_type', `'${field}' must be an object, got ${typeName(v)}.`, field);
    }
  }
  const tools = body.tools;
  if (tools !== undefined && tools !== null && !Array.isArray(tools)) {
    return fail('invalid_type', `'tools' must be an array, got ${typeName(tools)}.`, 'tools');
  }
  const stop = body.stop;
  if (stop !== undefined && stop !== null && typeof stop !== 'string' && !Array.isArray(stop)) {
    return fail('invalid_type', `'stop' must be a string or an array of strings, got ${typeName(stop)}.`, 'stop');
  }
  return {
    ok: true,
    body: body as ChatRequestBody,
    model,
    stream: body.stream === true,
  };
}
