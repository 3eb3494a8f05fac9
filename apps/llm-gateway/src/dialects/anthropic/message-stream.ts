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
import type { GatewayError } from '../../http/errors.js';
import { ChatChunkReader, type ChunkEncoder, type ToolCallDelta } from '../chat-chunks.js';
import type { DecodedRequest, StreamEncoder } from '../codec.js';
import { anthropicErrorEvent } from './anthropic-errors.js';
import { modelOf } from '../answer-model.js';
import { messageId, stopOf, usageJson } from './message-parts.js';

const frame = (event: string, data: string): string => `event: ${event}\ndata: ${data}\n\n`;
const PING = frame('ping', '{"type":"ping"}');
const MESSAGE_STOP = frame('message_stop', '{"type":"message_stop"}');

export class AnthropicStream implements StreamEncoder, ChunkEncoder {
  private readonly chunks = new ChatChunkReader(this);
  private readonly id = messageId();
  private started = false;
  private pinged = false;
  /** Blocks started so far; the open one, if any, is the last (`blocks - 1`). */
  private blocks = 0;
  private open: 'text' | 'tool_use' | undefined = undefined;
  /** Per chat tool-call index: the index of its tool_use block. */
  private readonly toolBlocks = new Map<number, number>();

  constructor(
    private readonly result: StreamResult,
    private readonly request: DecodedRequest,
  ) {}

  event(chunk: string): string {
    return (this.started ? '' : this.start()) + this.chunks.read(chunk);
  }

  end(result: StreamResult): string {
    let out = (this.started ? '' : this.start()) + this.closeBlock();
    if (!this.pinged) out += PING;
    // A refusal is Anthropic's content filter, whatever finish reason the upstream gave.
    const chunks = this.chunks;
    const stop = stopOf(chunks.refused ? 'content_filter' : chunks.finishReason, chunks.matchedStop, this.request);
    const usage = usageJson(result.usage, () => this.estimatedInput(), () => estimateTokens(chunks.output));
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

  /** Text and refusal alike: Anthropic's answer has text blocks only (the stop reason tells a refusal). */
  text(_kind: 'output_text' | 'refusal', text: string): string {
    let out = '';
    if (this.open !== 'text') out += this.startBlock('text', '{"type":"text","text":""}');
    return out + this.delta(this.blocks - 1, `{"type":"text_delta","text":${JSON.stringify(text)}}`);
  }

  /** A call's first delta starts its tool_use block (with its id and name); argument text goes to the call's own block. */
  toolCall(call: ToolCallDelta): string {
    let out = '';
    let block = this.toolBlocks.get(call.index);
    if (block === undefined) {
      const id = call.id ?? `toolu_${this.id.slice(4)}_${call.index}`;
      out += this.startBlock('tool_use', `{"type":"tool_use","id":${JSON.stringify(id)},"name":${JSON.stringify(call.name ?? '')},"input":{}}`);
      block = this.blocks - 1;
      this.toolBlocks.set(call.index, block);
    }
    if (call.args === undefined) return out;
    // Servers stream calls one after another; arguments of an earlier call still go to its own block.
    return out + this.delta(block, `{"type":"input_json_delta","partial_json":${JSON.stringify(call.args)}}`);
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
