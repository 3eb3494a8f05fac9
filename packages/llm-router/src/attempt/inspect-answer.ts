import { abortedError, noAttempts, RouterError } from '../errors.js';
import { isPlainObject } from '../plain-object.js';
import type { AliasConfig, AnswerCheck, RouterRequest } from '../types.js';
import type { Failure } from './classify-error.js';
import { answerProblem, invalidSchema, jsonExpectation, tooLarge, type JsonExpectation } from './response-schema.js';
import type { QueueFull } from './fair-queue.js';
import type { SchemaChecker, SchemaJobOwner } from './schema-checker.js';

/**
 * What makes a 200 answer useless, looked for only where the alias asked
 * (`fail_over_on`); classify-error.ts decides what a finding means. Each check
 * is one pass over the choices; with only `empty` listed (the default) this is
 * the same work as before these checks existed.
 */
export interface AnswerChecks {
  readonly checks: ReadonlySet<AnswerCheck>;
  /** Set when the request asked for JSON and the alias lists `invalid_json`. */
  readonly json: JsonCheck | undefined;
}

/** The JSON asked for, the checker that holds its compiled schema, and whose share of it the checks use. */
export interface JsonCheck extends JsonExpectation {
  readonly checker: SchemaChecker;
  readonly owner: SchemaJobOwner;
}

/** How long a caller refused for busy schema checks is told to wait: a running job ends within its budget (2 s). */
export const SCHEMA_BUSY_RETRY_AFTER_S = 2; // 2 s

/**
 * The checks for one request, worked out once before any upstream call: the
 * alias's `fail_over_on`, and the compiled `response_format` schema (a schema
 * that does not compile throws `invalid_schema` here, one past the size bounds
 * `schema_too_large`, and one the caller's share of the schema workers cannot
 * take now `schema_checks_busy`). A stream's JSON is never checked: it would be complete
 * only after it was relayed (see stream-commit.ts).
 *
 * The schema is looked at only where it will be used: an alias that does not
 * list `invalid_json`, or a stream, passes it on untouched, since compiling it
 * would cost the event loop (seconds for a large one) for nothing.
 */
export async function answerChecks(
  request: RouterRequest,
  config: AliasConfig,
  alias: string | undefined,
  checker: SchemaChecker,
): Promise<AnswerChecks> {
  if (request.operation === 'embedding') return NO_CHECKS;
  if (!config.failOverOn.has('invalid_json') || request.stream) return { checks: config.failOverOn, json: undefined };
  const json = jsonExpectation((request.body as Record<string, unknown>).response_format, alias);
  const owner: SchemaJobOwner = { caller: request.caller, signal: request.signal };
  if (json?.schema !== undefined) {
    const compiled = await checker.run({ kind: 'prepare', schema: json.schema }, owner);
    if (request.signal?.aborted === true) throw abortedError({ outcome: noAttempts(alias) });
    if (!compiled.ok && compiled.busy !== undefined) throw busy(compiled.busy, alias);
    // Past the budget (or the worker's memory): the schema costs more than one request may.
    if (!compiled.ok) throw tooLarge(`compiling it ${compiled.why}`, alias);
    if (compiled.problem !== undefined) throw invalidSchema(compiled.problem, alias);
  }
  return { checks: config.failOverOn, json: json === undefined ? undefined : { ...json, checker, owner } };
}

function busy(full: QueueFull, alias: string | undefined): RouterError {
  const whose = full === 'caller' ? ' of this caller' : '';
  return new RouterError('schema_checks_busy', `Too many response schemas${whose} are waiting to be checked; retry in a moment.`, {
    outcome: { ...noAttempts(alias), retryAfterSeconds: SCHEMA_BUSY_RETRY_AFTER_S },
    param: 'response_format',
  });
}

const NO_CHECKS: AnswerChecks = Object.freeze({ checks: new Set<AnswerCheck>(), json: undefined });

/**
 * The first useless-answer finding in a `chat.completion`, or undefined when it
 * may be relayed. A promise only when an answer is checked against a schema
 * (on the schema worker); every other check answers at once.
 */
export function inspectCompletion(body: Record<string, unknown>, spec: AnswerChecks): Failure | undefined | Promise<Failure | undefined> {
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
  if (spec.json === undefined || !Array.isArray(body.choices)) return undefined;
  const contents: unknown[] = [];
  for (const choice of body.choices) {
    const message = isPlainObject(choice) && isPlainObject(choice.message) ? choice.message : undefined;
    // A tool-call answer carries no JSON content by design.
    if (message === undefined || (Array.isArray(message.tool_calls) && message.tool_calls.length > 0)) continue;
    contents.push(message.content);
  }
  if (spec.json.schema !== undefined) return schemaProblems(contents, spec.json);
  for (const content of contents) {
    const problem = answerProblem(undefined, content);
    if (problem !== undefined) return invalidJson(problem);
  }
  return undefined;
}

/** Each content checked against the schema on the schema worker, in turn: the first problem found. */
async function schemaProblems(contents: readonly unknown[], json: JsonCheck): Promise<Failure | undefined> {
  for (const content of contents) {
    const checked = await json.checker.run({ kind: 'check', schema: json.schema, content }, json.owner);
    // Left the queue because the request went away: the attempt ends as aborted, not as a bad answer.
    if (json.owner.signal?.aborted === true) throw abortedError();
    const problem = checked.ok ? checked.problem : `the answer could not be checked against the response schema: checking it ${checked.why}`;
    if (problem !== undefined) return invalidJson(problem);
  }
  return undefined;
}

function invalidJson(problem: string): Failure {
  return { kind: 'invalid_answer', reason: 'invalid_json', detail: problem };
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
