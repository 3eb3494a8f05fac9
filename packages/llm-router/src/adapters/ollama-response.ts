import type { Usage } from '../types.js';
import { InvalidResponseError, type StreamDecoder, type StreamEvent } from './adapter.js';
import { ToolCallIds } from './tool-call-ids.js';
import { streamEventObject } from './stream-event-json.js';
import { isPlainObject } from '../plain-object.js';
import { NdjsonParser } from './ndjson-parser.js';
import { checkedUsage } from './token-usage.js';

/**
 * Ollama native answers → OpenAI `chat.completion` / `chat.completion.chunk`,
 * so callers see one protocol whichever target answered.
 */

let sequence = 0;
const ID_BASE = Date.now().toString(36);

/** Unique per process without a random source on the hot path. */
function completionId(): string {
  sequence = (sequence + 1) | 0;
  return `chatcmpl-${ID_BASE}${(sequence >>> 0).toString(36)}`;
}

function createdSeconds(native: Record<string, unknown>): number {
  const at = typeof native.created_at === 'string' ? Date.parse(native.created_at) : NaN;
  return Math.floor((Number.isNaN(at) ? Date.now() : at) / 1000);
}

/** Ollama leaves out a count that is zero (a prompt served from its cache): absent is 0, both absent is unknown. */
function ollamaUsage(native: Record<string, unknown>): Usage | undefined {
  const prompt = native.prompt_eval_count;
  const completion = native.eval_count;
  if (prompt === undefined && completion === undefined) return undefined;
  return checkedUsage({ prompt: prompt ?? 0, completion: completion ?? 0 });
}

function finishReason(native: Record<string, unknown>, sawToolCalls: boolean): string {
  if (sawToolCalls) return 'tool_calls';
  return native.done_reason === 'length' ? 'length' : 'stop';
}

/**
 * Ollama tool calls carry argument objects; OpenAI wants JSON strings and ids.
 * `index` belongs to stream deltas only (it says which call a delta continues):
 * OpenAI's answers and its spec have none on a message's tool calls.
 */
function toolCalls(calls: unknown, firstIndex: number, id: string, indexed: boolean, ids: ToolCallIds): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  if (!Array.isArray(calls)) return out;
  for (const call of calls) {
    if (!isPlainObject(call) || !isPlainObject(call.function)) continue;
    const index = firstIndex + out.length;
    const args = call.function.arguments;
    const translated: Record<string, unknown> = {
      // An id Ollama gave is kept only when safe and unique (tool-call-ids.ts).
      id: typeof call.id === 'string' && call.id !== '' ? ids.id(call.id, `0:${index}`) : `call_${id}_${index}`,
      type: 'function',
      function: {
        name: typeof call.function.name === 'string' ? call.function.name : '',
        arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
      },
    };
    out.push(indexed ? { index, ...translated } : translated);
  }
  return out;
}

/** A non-streaming `/api/chat` answer → `chat.completion`. */
export function toOpenAICompletion(native: unknown): Record<string, unknown> {
  if (!isPlainObject(native) || !isPlainObject(native.message)) throw new InvalidResponseError('ollama answer has no message');
  const id = completionId();
  const m = native.message;
  const calls = toolCalls(m.tool_calls, 0, id, false, new ToolCallIds());
  const text = typeof m.content === 'string' ? m.content : '';
  // As OpenAI answers (and its spec requires `content` and `refusal`, null allowed): a message that only calls tools has null content.
  const message: Record<string, unknown> = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text, refusal: null };
  if (typeof m.thinking === 'string' && m.thinking.length > 0) message.reasoning_content = m.thinking;
  if (calls.length > 0) message.tool_calls = calls;
  const out: Record<string, unknown> = {
    id,
    object: 'chat.completion',
    created: createdSeconds(native),
    model: typeof native.model === 'string' ? native.model : '',
    // `logprobs` is required by the spec; Ollama reports none.
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(native, calls.length > 0) }],
  };
  const usage = ollamaUsage(native);
  if (usage !== undefined) out.usage = usage;
  return out;
}

/** Ollama NDJSON stream → `chat.completion.chunk` events. */
export class OllamaStreamDecoder implements StreamDecoder {
  private readonly lines: NdjsonParser;
  private readonly id = completionId();
  private created = 0;
  private model = '';
  private sentRole = false;
  private toolCallCount = 0;
  private readonly ids = new ToolCallIds();
  private finished = false;
  skippedEvents = 0;

  /** `maxEventBytes`: `max_stream_event_bytes` (the default when omitted). */
  constructor(maxEventBytes?: number) {
    this.lines = new NdjsonParser(maxEventBytes);
  }

  push(chunk: Uint8Array): StreamEvent[] {
    return this.events(this.lines.push(chunk));
  }

  end(): StreamEvent[] {
    return this.events(this.lines.end());
  }

  private events(lines: string[]): StreamEvent[] {
    const out: StreamEvent[] = [];
    for (const line of lines) {
      if (this.finished) break;
      const native = streamEventObject(line);
      if (native === undefined) {
        this.skippedEvents++;
        continue;
      }
      if (native.error !== undefined && native.error !== null) {
        out.push({ type: 'error', message: typeof native.error === 'string' ? native.error : 'error event' });
        continue;
      }
      this.translate(native, out);
    }
    return out;
  }

  private translate(native: Record<string, unknown>, out: StreamEvent[]): void {
    if (this.created === 0) {
      this.created = createdSeconds(native);
      this.model = typeof native.model === 'string' ? native.model : '';
    }
    const m = isPlainObject(native.message) ? native.message : {};
    const delta: Record<string, unknown> = {};
    if (!this.sentRole) delta.role = 'assistant';
    let hasDelta = false;
    if (typeof m.content === 'string' && m.content.length > 0) {
      delta.content = m.content;
      hasDelta = true;
    }
    if (typeof m.thinking === 'string' && m.thinking.length > 0) {
      delta.reasoning_content = m.thinking;
      hasDelta = true;
    }
    const calls = toolCalls(m.tool_calls, this.toolCallCount, this.id, true, this.ids);
    if (calls.length > 0) {
      this.toolCallCount += calls.length;
      delta.tool_calls = calls;
      hasDelta = true;
    }
    if (hasDelta || !this.sentRole) {
      this.sentRole = true;
      out.push({ type: 'chunk', data: this.chunk(delta, null, undefined), delta: hasDelta });
    }
    if (native.done === true) {
      this.finished = true;
      const usage = ollamaUsage(native);
      const reason = finishReason(native, this.toolCallCount > 0);
      out.push({ type: 'chunk', data: this.chunk({}, reason, usage), delta: false, finish: true, usage });
      out.push({ type: 'done' });
    }
  }

  private chunk(delta: Record<string, unknown>, finish: string | null, usage: Usage | undefined): string {
    const chunk: Record<string, unknown> = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    };
    if (usage !== undefined) chunk.usage = usage;
    return JSON.stringify(chunk);
  }
}
