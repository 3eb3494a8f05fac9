import { createHash } from 'node:crypto';
import { isPlainObject } from '../plain-object.js';

/**
 * The tool-call ids a client gets: unique within one answer, and of a form
 * every target accepts when the client sends them back on its next turn.
 *
 * Why: a client echoes each id twice on its next turn (the assistant's call
 * and the tool's result), and that turn may go to another target. Anthropic
 * refuses an id outside `^[a-zA-Z0-9_-]+$` and two tool_use blocks with one
 * id; OpenAI refuses a chat tool-call id longer than 40 characters; a
 * Responses client cannot tell two function_call items with one `call_id`
 * apart (and the gateway refuses such input: decode-input.ts). An upstream
 * that repeats an id, or writes one with control characters or markup, would
 * make the conversation unusable from then on.
 *
 * An id that is already safe and not yet used in the answer is kept as the
 * upstream wrote it (the upstream's answer then passes through untouched).
 * Any other is rewritten deterministically: its allowed characters (at most
 * 27) + `_` + 12 hex digits of its SHA-256, so the same upstream id always
 * becomes the same id. The client sees and returns only the rewritten id, so
 * the next turn's upstream gets the same id in the call and in its result.
 * A repeat (the second call named `x`) hashes the id with its occurrence
 * number (`x`, then `x_<hash of "x" + 2>`, …).
 */

/** Anthropic's pattern for a tool_use id, within OpenAI's 40-character bound for a chat tool-call id. */
export const SAFE_TOOL_CALL_ID = /^[A-Za-z0-9_-]{1,40}$/;

const MAX_ID_CHARS = 40;
const HASH_CHARS = 12;
const PREFIX_CHARS = MAX_ID_CHARS - HASH_CHARS - 1;

/** `original` itself when it is safe; else its deterministic rewrite. */
export function safeToolCallId(original: string): string {
  return SAFE_TOOL_CALL_ID.test(original) ? original : rewritten(original, original);
}

function rewritten(original: string, hashed: string): string {
  const prefix = original.replace(/[^A-Za-z0-9_-]+/g, '').slice(0, PREFIX_CHARS) || 'call';
  return `${prefix}_${createHash('sha256').update(hashed).digest('hex').slice(0, HASH_CHARS)}`;
}

/**
 * The ids of one answer (a JSON answer, or one stream: a decoder holds one).
 * `key` names the call an id belongs to (`<choice>:<call>`): a stream that
 * repeats a call's id in its later deltas keeps the one id; another call with
 * the same id gets a new one. Only non-empty string ids are looked at: the
 * encoders give a call without an id one of their own.
 */
export class ToolCallIds {
  private readonly byCall = new Map<string, string>();
  private readonly used = new Set<string>();
  /** Per choice: calls seen without an `index` (stream deltas of servers that number none). */
  private readonly unindexed = new Map<number, number>();

  /** The id the client gets for the call `key`, first named `original` by the upstream. */
  id(original: string, key: string): string {
    const known = this.byCall.get(key);
    if (known !== undefined) return known;
    let id = safeToolCallId(original);
    for (let n = 2; this.used.has(id); n++) id = rewritten(original, `${original}\u0000${n}`);
    this.used.add(id);
    this.byCall.set(key, id);
    return id;
  }

  /**
   * A `chat.completion` with safe, unique tool-call ids: the same object when
   * every id already is (the upstream's text can then be relayed as written),
   * else a copy with the ids replaced.
   */
  completion(body: Record<string, unknown>): Record<string, unknown> {
    const choices = body.choices;
    if (!Array.isArray(choices)) return body;
    let changed: unknown[] | undefined;
    choices.forEach((choice: unknown, c) => {
      const message = isPlainObject(choice) ? choice.message : undefined;
      if (!isPlainObject(message) || !Array.isArray(message.tool_calls)) return;
      const calls = this.calls(message.tool_calls, c, (_, j) => j);
      if (calls === message.tool_calls) return;
      changed ??= [...choices];
      changed[c] = { ...(choice as Record<string, unknown>), message: { ...message, tool_calls: calls } };
    });
    return changed === undefined ? body : { ...body, choices: changed };
  }

  /**
   * One `chat.completion.chunk`, its tool-call deltas' ids made safe and
   * unique in place; true when one changed (the chunk must be serialised again).
   */
  chunk(value: Record<string, unknown>): boolean {
    const choices = value.choices;
    if (!Array.isArray(choices)) return false;
    let changed = false;
    for (const choice of choices) {
      if (!isPlainObject(choice) || !isPlainObject(choice.delta) || !Array.isArray(choice.delta.tool_calls)) continue;
      const c = typeof choice.index === 'number' ? choice.index : 0;
      const calls = this.calls(choice.delta.tool_calls, c, (call) => (typeof call.index === 'number' ? call.index : `n${this.nextUnindexed(c)}`));
      if (calls === choice.delta.tool_calls) continue;
      choice.delta.tool_calls = calls;
      changed = true;
    }
    return changed;
  }

  /** `calls` with their ids replaced (a copy), or `calls` itself when none changes. */
  private calls(calls: unknown[], choice: number, callKey: (call: Record<string, unknown>, position: number) => number | string): unknown[] {
    let out: unknown[] | undefined;
    calls.forEach((call: unknown, j) => {
      if (!isPlainObject(call) || typeof call.id !== 'string' || call.id === '') return;
      const id = this.id(call.id, `${choice}:${callKey(call, j)}`);
      if (id === call.id) return;
      out ??= [...calls];
      out[j] = { ...call, id };
    });
    return out ?? calls;
  }

  private nextUnindexed(choice: number): number {
    const n = this.unindexed.get(choice) ?? 0;
    this.unindexed.set(choice, n + 1);
    return n;
  }
}
