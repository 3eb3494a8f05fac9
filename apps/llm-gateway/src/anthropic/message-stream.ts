/**
 * The router's `chat.completion.chunk` events → Anthropic's stream, in
 * Anthropic's order, one encoder per stream:
 *
 *   message_start            (usage.input_tokens: the upstream's figure, else the
 *                             gateway's estimate; never 0 for a prompt, which
 *                             Claude Code would read as an empty context)
 *   content_block_start      per block, indexes 0, 1, … in the order the answer
 *   ping                     gives them (text, then each tool call); ping once,
 *   content_block_delta      after the first block starts, as Anthropic sends it;
 *   content_block_stop       text_delta for text, input_json_delta for arguments
 *   message_delta            stop_reason, stop_sequence, the final usage
 *   message_stop
 *
 * A block is closed when the next one starts or the answer ends, so a delta
 * always names a block that was started (peers' "Content block not found").
 * A stream that breaks after its first event ends with `event: error`, never
 * with message_stop (see relay-stream.ts). Each chunk is parsed once here:
 * the router hands its events on as JSON text (~1 µs for a ~200-byte chunk).
 */
import { estimatePromptTokens, estimateTokens, type ChatRequestBody, type StreamResult } from '@mana/llm-router';
import type { GatewayError } from '../http/errors.js';
import { isPlainObject } from '../plain-object.js';
import { firstChoice, nonEmpty, toolCallIndex } from '../routes/chat-chunk.js';
import type { DecodedRequest, StreamEncoder } from '../routes/inbound-codec.js';
import { anthropicErrorEvent } from './anthropic-errors.js';
import { messageId, modelOf, stopOf, usageJson } from './message-parts.js';

type Json = Record<string, unknown>;

const frame = (event: string, data: string): string => `event: ${event}\ndata: ${data}\n\n`;
const PING = frame('ping', '{"type":"ping"}');
const MESSAGE_STOP = frame('message_stop', '{"type":"message_stop"}');

export class AnthropicStream implements StreamEncoder {
  private readonly id = messageId();
  private started = false;
  private pinged = false;
  /** Blocks started so far; the open one, if any, is the last (`blocks - 1`). */
  private blocks = 0;
  private open: 'text' | 'tool_use' | undefined = undefined;
  /** Per OpenAI tool-call index: the index of its tool_use block. */
  private readonly toolBlocks = new Map<number, number>();
  private lastToolIndex = -1;
  private finishReason: unknown = undefined;
  private matchedStop: unknown = undefined;
  /** The answer's text and arguments, kept only to estimate output tokens when the upstream reports none. */
  private output = '';

  constructor(
    private readonly result: StreamResult,
    private readonly request: DecodedRequest,
  ) {}

  event(chunk: string): string {
    let out = this.started ? '' : this.start();
    const choice = firstChoice(chunk);
    if (choice === undefined) return out;
    const delta = choice.delta;
    if (isPlainObject(delta)) {
      const text = nonEmpty(delta.content) ?? nonEmpty(delta.refusal);
      if (text !== undefined) out += this.text(text);
      if (delta.refusal !== undefined && delta.refusal !== null) this.finishReason = 'content_filter';
      if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) if (isPlainObject(call)) out += this.toolCall(call);
    }
    if (choice.finish_reason !== undefined && choice.finish_reason !== null && this.finishReason !== 'content_filter') {
      this.finishReason = choice.finish_reason;
      this.matchedStop = choice.stop_reason;
    }
    return out;
  }

  end(result: StreamResult): string {
    let out = (this.started ? '' : this.start()) + this.closeBlock();
    if (!this.pinged) out += PING;
    const stop = stopOf(this.finishReason, this.matchedStop, this.request);
    const usage = usageJson(result.usage, () => this.estimatedInput(), () => estimateTokens(this.output));
    out += frame('message_delta', `{"type":"message_delta","delta":${JSON.stringify(stop)},"usage":${JSON.stringify(usage)}}`);
    return out + MESSAGE_STOP;
  }

  failed(error: GatewayError): string {
    return anthropicErrorEvent(error);
  }

  private start(): string {
    this.started = true;
    const upstream = this.result.usage?.prompt_tokens;
    const input = upstream !== undefined && upstream > 0 ? upstream : this.estimatedInput();
    const message = {
      id: this.id,
      type: 'message',
      role: 'assistant',
      model: modelOf(this.request, this.result.outcome),
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: input, output_tokens: 0 },
    };
    return frame('message_start', `{"type":"message_start","message":${JSON.stringify(message)}}`);
  }

  private estimatedInput(): number {
    return estimatePromptTokens(this.request.body as ChatRequestBody);
  }

  private text(text: string): string {
    this.output += text;
    let out = '';
    if (this.open !== 'text') out += this.startBlock('text', '{"type":"text","text":""}');
    return out + this.delta(this.blocks - 1, `{"type":"text_delta","text":${JSON.stringify(text)}}`);
  }

  /**
   * One tool-call delta. A call starts with its id and name (OpenAI sends them
   * in its first delta); later deltas of the same index carry argument text.
   * A server that numbers no calls starts a new one with each id.
   */
  private toolCall(call: Json): string {
    const fn = isPlainObject(call.function) ? call.function : {};
    const index = toolCallIndex(call, this.lastToolIndex);
    let out = '';
    let block = this.toolBlocks.get(index);
    if (block === undefined) {
      const id = typeof call.id === 'string' && call.id !== '' ? call.id : `toolu_${this.id.slice(4)}_${index}`;
      const name = typeof fn.name === 'string' ? fn.name : '';
      out += this.startBlock('tool_use', `{"type":"tool_use","id":${JSON.stringify(id)},"name":${JSON.stringify(name)},"input":{}}`);
      block = this.blocks - 1;
      this.toolBlocks.set(index, block);
      this.lastToolIndex = index;
    }
    const args = nonEmpty(fn.arguments);
    if (args === undefined) return out;
    this.output += args;
    // Servers stream calls one after another; arguments of an earlier call still go to its own block.
    return out + this.delta(block, `{"type":"input_json_delta","partial_json":${JSON.stringify(args)}}`);
  }

  private startBlock(type: 'text' | 'tool_use', contentBlock: string): string {
    let out = this.closeBlock();
    const index = this.blocks++;
    this.open = type;
    out += frame('content_block_start', `{"type":"content_block_start","index":${index},"content_block":${contentBlock}}`);
    if (!this.pinged) {
      this.pinged = true;
      out += PING;
    }
    return out;
  }

  private closeBlock(): string {
    if (this.open === undefined) return '';
    this.open = undefined;
    return frame('content_block_stop', `{"type":"content_block_stop","index":${this.blocks - 1}}`);
  }

  private delta(index: number, delta: string): string {
    return frame('content_block_delta', `{"type":"content_block_delta","index":${index},"delta":${delta}}`);
  }
}
