import { isPlainObject } from '../plain-object.js';
import type { AliasConfig, AnswerCheck, RouterRequest } from '../types.js';
import type { Failure } from './classify-error.js';
import { jsonExpectation, type JsonExpectation } from './response-schema.js';

/**
 * What makes a 200 answer useless, looked for only where the alias asked
 * (`fail_over_on`); classify-error.ts decides what a finding means. Each check
 * is one pass over the choices; with only `empty` listed (the default) this is
 * the same work as before these checks existed.
 */
export interface AnswerChecks {
  readonly checks: ReadonlySet<AnswerCheck>;
  /** Set when the request asked for JSON and the alias lists `invalid_json`. */
  readonly json: JsonExpectation | undefined;
}

/**
 * The checks for one request, worked out once before any upstream call: the
 * alias's `fail_over_on`, and the compiled `response_format` schema (a schema
 * that does not compile throws `invalid_schema` here). A stream's JSON is never
 * checked: it would be complete only after it was relayed (see stream-commit.ts).
 */
export function answerChecks(request: RouterRequest, config: AliasConfig, alias: string | undefined): AnswerChecks {
  if (request.operation === 'embedding') return NO_CHECKS;
  const json = jsonExpectation((request.body as Record<string, unknown>).response_format, alias);
  return { checks: config.failOverOn, json: config.failOverOn.has('invalid_json') && !request.stream ? json : undefined };
}

const NO_CHECKS: AnswerChecks = Object.freeze({ checks: new Set<AnswerCheck>(), json: undefined });

/** The first useless-answer finding in a `chat.completion`, or undefined when it may be relayed. */
export function inspectCompletion(body: Record<string, unknown>, spec: AnswerChecks): Failure | undefined {
  const checks = spec.checks;
  if (checks.size === 0) return undefined;
  const onlyEmpty = checks.size === 1 && checks.has('empty');
  // The specific reasons first: a filtered or refused answer is often also empty.
  if (!onlyEmpty) {
    const choices = Array.isArray(body.choices) ? body.choices : [];
    for (const choice of choices) {
      if (!isPlainObject(choice)) continue;
      if (checks.has('content_filter') && choice.finish_reason === 'content_filter') {
        return { kind: 'invalid_answer', reason: 'content_filter', detail: 'finish_reason content_filter' };
      }
      if (checks.has('refusal') && isPlainObject(choice.message) && typeof choice.message.refusal === 'string') {
        return { kind: 'invalid_answer', reason: 'refusal', detail: 'the model refused (message.refusal)' };
      }
    }
  }
  if (checks.has('empty') && isEmptyCompletion(body)) return { kind: 'empty', reason: 'empty_response' };
  if (spec.json !== undefined && Array.isArray(body.choices)) {
    for (const choice of body.choices) {
      const message = isPlainObject(choice) && isPlainObject(choice.message) ? choice.message : undefined;
      // A tool-call answer carries no JSON content by design.
      if (message === undefined || (Array.isArray(message.tool_calls) && message.tool_calls.length > 0)) continue;
      const problem = jsonProblem(message.content, spec.json);
      if (problem !== undefined) return { kind: 'invalid_answer', reason: 'invalid_json', detail: problem };
    }
  }
  return undefined;
}

/** Why `content` is not the JSON asked for, or undefined when it is. Never echoes the content. */
function jsonProblem(content: unknown, json: JsonExpectation): string | undefined {
  if (typeof content !== 'string') return 'no text content where JSON was asked for';
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return 'content is not JSON';
  }
  if (json.schema === undefined || json.schema(value)) return undefined;
  const first = json.schema.errors?.[0];
  const where = first === undefined ? '' : `: ${first.instancePath === '' ? '(root)' : first.instancePath} ${first.message ?? 'is invalid'}`;
  return `content does not match the response schema${where.slice(0, 200)}`;
}

/** No content, no refusal, no tool calls in any choice: the upstream answered nothing. */
function isEmptyCompletion(body: Record<string, unknown>): boolean {
  const choices = body.choices;
  if (!Array.isArray(choices)) return true;
  for (const choice of choices) {
    if (!isPlainObject(choice) || !isPlainObject(choice.message)) continue;
    const m = choice.message;
    if (typeof m.content === 'string' && m.content.length > 0) return false;
    if (Array.isArray(m.content) && m.content.length > 0) return false;
    // A refusal is an answer (relayed unless `refusal` is listed), not an empty one.
    if (typeof m.refusal === 'string' && m.refusal.length > 0) return false;
    if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) return false;
    if (isPlainObject(m.function_call)) return false;
  }
  return true;
}
