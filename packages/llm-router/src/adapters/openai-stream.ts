import { choiceFinishReasons } from './choice-finish-reasons.js';
import type { StreamDecoder, StreamEvent } from './adapter.js';
import { isPlainObject } from '../plain-object.js';
import { SseParser } from './sse-parser.js';
import { streamEventObject } from './stream-event-json.js';
import { withoutNullUsage } from './stream-usage.js';
import { toUsage } from './token-usage.js';
import { ToolCallIds } from './tool-call-ids.js';

const DONE: StreamEvent = { type: 'done' };

/**
 * Decodes an OpenAI-compatible SSE stream. Each chunk is relayed as the exact
 * JSON text the upstream sent (no re-serialization); it is parsed only to learn
 * whether it carries a delta, usage, a finish reason or an error.
 *
 * Every chunk is parsed, after the commit too. A cheap text scan (for
 * `"error"`, `"usage"`, `"finish_reason"`) would save about 1 µs per ~200-byte
 * chunk (measured: `JSON.parse` is ~1.1 µs of the ~2.5 µs a first chunk costs
 * here, and nothing after the commit is on the first-byte path), but it cannot
 * tell a malformed chunk from a good one: a truncated or garbled chunk after
 * the commit must still end the stream with an error event rather than be
 * relayed as if it were valid, and a scan would also misread those words
 * inside content. So the parse stays. (Such a chunk is skipped and counted,
 * not relayed: stream-event-json.ts.)
 */
export class OpenAIStreamDecoder implements StreamDecoder {
  private readonly sse: SseParser;
  private sawDone = false;
  private sawFinish = false;
  /** The stream's tool-call ids, kept safe and unique (tool-call-ids.ts). */
  private readonly ids = new ToolCallIds();
  skippedEvents = 0;

  /**
   * `maxEventBytes`: `max_stream_event_bytes` (the default when omitted).
   * `hideUsage`: usage was requested for the gateway, not the client: the usage-only
   * chunk is marked hidden and the `"usage":null` that such upstreams add to every
   * other chunk is taken out, so the client sees the stream it would have seen.
   */
  constructor(
    maxEventBytes?: number,
    private readonly hideUsage = false,
  ) {
    this.sse = new SseParser(maxEventBytes);
  }

  push(chunk: Uint8Array): StreamEvent[] {
    return this.events(this.sse.push(chunk));
  }

  end(): StreamEvent[] {
    const events = this.events(this.sse.end());
    // Some servers end after the finish chunk without `[DONE]`; that is a complete answer.
    // Without either marker the answer was cut short and the caller must not see a clean end.
    if (!this.sawDone && this.sawFinish) events.push(DONE);
    return events;
  }

  private events(payloads: string[]): StreamEvent[] {
    const out: StreamEvent[] = [];
    for (const data of payloads) {
      if (this.sawDone) break;
      const value = data === '[DONE]' ? undefined : streamEventObject(data);
      if (data !== '[DONE]' && value === undefined) {
        this.skippedEvents++;
        continue;
      }
      const event = value === undefined ? DONE : decodeChunk(data, value, this.hideUsage, this.ids);
      if (event === DONE) this.sawDone = true;
      else if (event.type === 'chunk' && event.finish === true) this.sawFinish = true;
      out.push(event);
    }
    return out;
  }
}

function decodeChunk(data: string, value: Record<string, unknown>, hideUsage: boolean, ids: ToolCallIds): StreamEvent {
  if (value.error !== undefined && value.error !== null) return { type: 'error', message: errorMessage(value.error) };
  // Only a chunk whose tool-call id had to change is serialised again; every other goes out as written.
  if (ids.chunk(value)) data = JSON.stringify(value);
  const flags = inspectChoices(value.choices);
  const usage = toUsage(value.usage);
  if (hideUsage) {
    if (usage !== undefined && flags === 0 && Array.isArray(value.choices) && value.choices.length === 0) {
      return { type: 'chunk', data, delta: false, finish: false, usage, hidden: true };
    }
    if (value.usage === null) data = withoutNullUsage(data);
  }
  if ((flags & (FILTERED | REFUSAL)) !== 0) {
    return {
      type: 'chunk',
      data,
      delta: (flags & HAS_DELTA) !== 0,
      finish: (flags & HAS_FINISH) !== 0,
      filtered: (flags & FILTERED) !== 0,
      refusal: (flags & REFUSAL) !== 0,
      usage,
    };
  }
  if ((flags & HAS_FINISH) !== 0) {
    // Read here, where the chunk is parsed anyway: a traced stream's end needs them, and need not parse the chunk again.
    return { type: 'chunk', data, delta: (flags & HAS_DELTA) !== 0, finish: true, finishReasons: choiceFinishReasons(value.choices), usage };
  }
  return {
    type: 'chunk',
    data,
    delta: (flags & HAS_DELTA) !== 0,
    finish: false,
    usage,
  };
}

const HAS_DELTA = 1;
const HAS_FINISH = 2;
const FILTERED = 4;
const REFUSAL = 8;

/** One pass over the choices: does any carry content / reasoning / tool calls, a refusal, or a finish reason (content_filter)? */
function inspectChoices(choices: unknown): number {
  if (!Array.isArray(choices)) return 0;
  let flags = 0;
  for (const choice of choices) {
    if (!isPlainObject(choice)) continue;
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) {
      flags |= HAS_FINISH;
      if (choice.finish_reason === 'content_filter') flags |= FILTERED;
    }
    const d = choice.delta;
    if (!isPlainObject(d)) continue;
    if (nonEmpty(d.refusal)) flags |= REFUSAL;
    if (nonEmpty(d.content) || nonEmpty(d.reasoning_content) || nonEmpty(d.reasoning)) flags |= HAS_DELTA;
    else if (Array.isArray(d.tool_calls) && d.tool_calls.length > 0) flags |= HAS_DELTA;
  }
  return flags;
}

function nonEmpty(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0;
}

function errorMessage(error: unknown): string {
  if (typeof error === 'string') return error;
  if (isPlainObject(error) && typeof error.message === 'string') return error.message;
  return 'error event';
}
