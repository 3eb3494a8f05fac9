/**
 * Validation of a chat completion request body. Pure and cheap: checks the shape
 * the gateway and router rely on, and the types of the common fields, so a bad
 * request gets a 400 with a stable code instead of a confusing upstream error.
 * Everything else is passed through untouched.
 */
import type { ChatRequestBody } from '@mana/llm-router';
import { typeName } from '../../http/refusal.js';
import { isPlainObject } from '../../plain-object.js';
import { routedBody, type Validation, type ValidationError } from '../routed-body.js';

export type ChatValidationError = ValidationError<'invalid_request' | 'missing_messages' | 'invalid_type' | 'invalid_model'>;

export type ChatValidation = Validation<ChatRequestBody, ChatValidationError['code']>;

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
