import type { Usage } from '../types.js';
import { InvalidResponseError, type StreamDecoder, type StreamEvent } from './adapter.js';
import { finishReasonOf, openAIUsage, toolCallOf, usageOf } from './anthropic-response.js';
import { streamEventObject } from './stream-event-json.js';
import { isPlainObject } from '../plain-object.js';
import { SseParser } from './sse-parser.js';
import { ToolCallIds } from './tool-call-ids.js';

const DONE: StreamEvent = { type: 'done' };

/** What a content block index stands for once its `content_block_start` arrived. */
type OpenBlock = { readonly kind: 'text' | 'thinking' | 'other' } | { readonly kind: 'tool_use'; readonly call: number };

/**
 * Anthropic's SSE events → `chat.completion.chunk` events:
 *
 *   message_start                  → the role chunk (no delta); id, model and input usage remembered
 *   content_block_start text       → nothing (its text arrives as text_delta)
 *   content_block_start tool_use   → a tool call's first delta: index, id, name, `arguments: ""`
 *   content_block_delta            → text_delta → `content`, thinking_delta → `reasoning_content`,
 *                                    input_json_delta → that tool call's `arguments` piece
 *   content_block_stop, ping       → nothing
 *   message_delta                  → the finish chunk (finish_reason from stop_reason), then the usage chunk
 *   message_stop                   → the clean end
 *   error                          → the stream's error event
 *
 * Tool calls are numbered 0, 1, … in the order their blocks start, whatever
 * the block indexes (text or thinking blocks come between). A delta for a
 * block that never started is malformed data, never guessed at. Usage is
 * reported in a last chunk with `choices: []` as OpenAI does, hidden from a
 * client that did not ask for it (`stream_options.include_usage`).
 *
 * Native (the client itself speaks Messages): each upstream event becomes one
 * chunk whose `data` is that event's JSON as Anthropic sent it, `message_stop`
 * and `ping` included, flagged from the translation above (a delta where it
 * would carry content, its finish, its usage), so the commit rule, usage and
 * errors are decided exactly as for a translated stream.
 */
export class AnthropicStreamDecoder implements StreamDecoder {
  private readonly sse: SseParser;
  private readonly blocks = new Map<number, OpenBlock>();
  private id = '';
  private model = '';
  private created = 0;
  private started = false;
  private finished = false;
  private calls = 0;
  /** The stream's tool_use ids, kept safe and unique (tool-call-ids.ts). */
  private readonly ids = new ToolCallIds();
  /** The event being decoded had its tool_use id replaced: a native relay must serialise it again. */
  private rewrote = false;
  skippedEvents = 0;
  /** The usage counts as reported so far: message_start's, updated by message_delta's. */
  private usage: Record<string, unknown> = {};

  /** `maxEventBytes`: `max_stream_event_bytes`; `hideUsage`: the client did not ask for the usage chunk; `native`: see above. */
  constructor(
    maxEventBytes?: number,
    private readonly hideUsage = true,
    private readonly native = false,
  ) {
    this.sse = new SseParser(maxEventBytes);
  }

  push(chunk: Uint8Array): StreamEvent[] {
    return this.events(this.sse.push(chunk));
  }

  end(): StreamEvent[] {
    // No `done` without message_stop: a stream cut short must not look complete.
    return this.events(this.sse.end());
  }

  private events(payloads: string[]): StreamEvent[] {
    const out: StreamEvent[] = [];
    for (const data of payloads) {
      if (this.finished) break;
      const event = streamEventObject(data);
      if (event === undefined) {
        this.skippedEvents++;
        continue;
      }
      if (this.native) this.relay(data, event, out);
      else this.translate(event, out);
    }
    return out;
  }

  /** Native: the event as it came, with what its translation says about it. */
  private relay(data: string, event: Record<string, unknown>, out: StreamEvent[]): void {
    const translated: StreamEvent[] = [];
    this.translate(event, translated);
    if (this.rewrote) {
      this.rewrote = false;
      data = JSON.stringify(event);
    }
    let delta = false;
    let finish = false;
    let filtered = false;
    let usage: Usage | undefined;
    for (const t of translated) {
      // An error event is the stream's failure, never relayed as an answer's event.
      if (t.type === 'error') {
        out.push(t);
        return;
      }
      if (t.type !== 'chunk') continue;
      delta ||= t.delta;
      finish ||= t.finish === true;
      filtered ||= t.filtered === true;
      if (t.usage !== undefined) usage = t.usage;
    }
    out.push({ type: 'chunk', data, delta, ...(finish ? { finish } : {}), ...(filtered ? { filtered } : {}), ...(usage === undefined ? {} : { usage }) });
    // After message_stop itself: the client gets Anthropic's end marker, then the stream ends.
    if (this.finished) out.push(DONE);
  }

  private translate(event: Record<string, unknown>, out: StreamEvent[]): void {
    switch (event.type) {
      case 'message_start':
        return this.start(event.message, out);
      case 'content_block_start':
        return this.blockStart(event, out);
      case 'content_block_delta':
        return this.blockDelta(event, out);
      case 'message_delta':
        return this.messageDelta(event, out);
      case 'message_stop':
        this.finished = true;
        out.push(DONE);
        return;
      case 'error': {
        const error = event.error;
        out.push({ type: 'error', message: isPlainObject(error) && typeof error.message === 'string' ? error.message : 'error event' });
        return;
      }
      default:
        // ping, content_block_stop, and event types newer than this decoder carry nothing to relay.
        return;
    }
  }

  private start(message: unknown, out: StreamEvent[]): void {
    if (this.started) throw new InvalidResponseError('anthropic sent a second message_start');
    this.started = true;
    const m = isPlainObject(message) ? message : {};
    this.id = typeof m.id === 'string' ? m.id : '';
    this.model = typeof m.model === 'string' ? m.model : '';
    this.created = Math.floor(Date.now() / 1000);
    if (isPlainObject(m.usage)) this.usage = { ...m.usage };
    out.push({ type: 'chunk', data: this.chunk({ role: 'assistant', content: '' }, null), delta: false });
  }

  private blockStart(event: Record<string, unknown>, out: StreamEvent[]): void {
    const index = this.index(event);
    const block = isPlainObject(event.content_block) ? event.content_block : {};
    if (block.type === 'tool_use') {
      const call = this.calls++;
      // Keyed as the JSON answer's calls are (anthropic-response.ts withSafeToolUseIds).
      if (typeof block.id === 'string' && block.id !== '') {
        const id = this.ids.id(block.id, `0:${call}`);
        if (id !== block.id) {
          block.id = id;
          this.rewrote = true;
        }
      }
      this.blocks.set(index, { kind: 'tool_use', call });
      // The first delta of an OpenAI tool call names it; its arguments follow as input_json_delta pieces.
      out.push({ type: 'chunk', data: this.chunk({ tool_calls: [{ index: call, ...toolCallOf(block, '') }] }, null), delta: true });
      return;
    }
    const kind = block.type === 'text' || block.type === 'thinking' ? block.type : 'other';
    this.blocks.set(index, { kind });
    // A start that already carries text (Anthropic sends it empty) is that text's first delta.
    if (kind === 'text' && typeof block.text === 'string' && block.text !== '') this.content({ content: block.text }, out);
  }

  private blockDelta(event: Record<string, unknown>, out: StreamEvent[]): void {
    const block = this.blocks.get(this.index(event));
    if (block === undefined) throw new InvalidResponseError('anthropic sent a content_block_delta for a block that never started');
    const d = isPlainObject(event.delta) ? event.delta : {};
    if (d.type === 'text_delta' && typeof d.text === 'string' && d.text !== '') this.content({ content: d.text }, out);
    else if (d.type === 'thinking_delta' && typeof d.thinking === 'string' && d.thinking !== '') this.content({ reasoning_content: d.thinking }, out);
    else if (d.type === 'input_json_delta' && block.kind === 'tool_use' && typeof d.partial_json === 'string' && d.partial_json !== '') {
      this.content({ tool_calls: [{ index: block.call, function: { arguments: d.partial_json } }] }, out);
    }
    // signature_delta and citations_delta have no chat completions form.
  }

  private messageDelta(event: Record<string, unknown>, out: StreamEvent[]): void {
    // Newer answers repeat every count here (cumulative); older ones only output_tokens.
    if (isPlainObject(event.usage)) Object.assign(this.usage, event.usage);
    const d = isPlainObject(event.delta) ? event.delta : {};
    const reason = finishReasonOf(d.stop_reason);
    const filtered = reason === 'content_filter';
    const finish = this.chunk({}, reason);
    out.push(filtered ? { type: 'chunk', data: finish, delta: false, finish: true, filtered } : { type: 'chunk', data: finish, delta: false, finish: true });
    const usage = usageOf(this.usage);
    if (usage === undefined) return;
    out.push({ type: 'chunk', data: this.usageChunk(usage), delta: false, finish: false, usage, ...(this.hideUsage ? { hidden: true } : {}) });
  }

  private content(delta: Record<string, unknown>, out: StreamEvent[]): void {
    out.push({ type: 'chunk', data: this.chunk(delta, null), delta: true });
  }

  private index(event: Record<string, unknown>): number {
    if (typeof event.index !== 'number') throw new InvalidResponseError(`anthropic sent a ${String(event.type)} without an index`);
    return event.index;
  }

  private chunk(delta: Record<string, unknown>, finish: string | null): string {
    // Native: only the flags of the translation are read, never its text.
    if (this.native) return '';
    return JSON.stringify({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
  }

  private usageChunk(usage: Usage): string {
    if (this.native) return '';
    return JSON.stringify({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage: openAIUsage(usage) });
  }
}
