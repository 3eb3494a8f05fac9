/**
 * A Messages request's `output_config` → the chat request's fields, the way
 * `/v1/responses` translates `text.format` and `reasoning.effort`:
 *
 *   format {type: json_schema, schema} → response_format json_schema (named `output`,
 *                                  strict): an alias's `fail_over_on: [invalid_json]`
 *                                  and its schema check apply, and a target that cannot
 *                                  honour it is skipped, never sent a free-text request
 *   effort                       → reasoning_effort, optional: a target whose protocol
 *                                  cannot honour it gets the request without it, the
 *                                  attempt's detail saying so (Claude Code sends it always)
 *
 * An `anthropic` target gets `output_config` as written (the client's own request).
 */
import type { ChatRequestBody } from '@mana/llm-router';
import { isPlainObject } from '../../plain-object.js';
import { Refusal, wrongType } from '../../http/refusal.js';

/** Anthropic's effort levels (@anthropic-ai/sdk's OutputConfig). */
const EFFORTS = new Set(['low', 'medium', 'high', 'xhigh', 'max']);

/** Sets the chat fields of `output_config`; pushes onto `optional` the ones a target may go without. */
export function outputConfig(value: unknown, chat: ChatRequestBody, optional: string[]): void {
  if (value === undefined || value === null) return;
  if (!isPlainObject(value)) throw wrongType('output_config', 'an object', value);
  const format = value.format;
  if (format !== undefined && format !== null) {
    if (!isPlainObject(format)) throw wrongType('output_config.format', 'an object', format);
    if (format.type !== 'json_schema') throw new Refusal('invalid_request', `output_config.format.type must be 'json_schema'.`, 'output_config.format.type');
    if (!isPlainObject(format.schema)) throw wrongType('output_config.format.schema', 'a JSON Schema (an object)', format.schema);
    chat.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema, strict: true } };
  }
  const effort = value.effort;
  if (effort !== undefined && effort !== null) {
    if (typeof effort !== 'string' || !EFFORTS.has(effort)) throw new Refusal('invalid_request', `output_config.effort must be one of ${[...EFFORTS].join(', ')}.`, 'output_config.effort');
    chat.reasoning_effort = effort;
    optional.push('reasoning_effort');
  }
}
