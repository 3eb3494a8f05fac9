/**
 * The one reader of the router's `chat.completion.chunk` events for the
 * stream encoders of other dialects (anthropic/message-stream.ts,
 * responses/response-stream.ts): each chunk is parsed once, its first
 * choice's text, refusal and tool-call deltas are handed to the encoder in
 * the order they come, and what the end of the stream needs is kept here
 * (the finish reason, the matched stop, whether the model refused, the
 * answer's text for an output estimate). An encoder only writes its own
 * frames.
 */
import { isPlainObject } from '../plain-object.js';

type Json = Record<string, unknown>;

/** One tool-call delta, as the chunk gave it. A call starts with its id and name (OpenAI sends them in its first delta); later deltas of the same index carry argument text. */
export interface ToolCallDelta {
  /** The call's chat index: OpenAI numbers its calls; a server that numbers none starts a new call with each id. */
  readonly index: number;
  /** The upstream's call id, when it gave a non-empty one. */
  readonly id: string | undefined;
  /** The function's name, when this delta carries one. */
  readonly name: string | undefined;
  /** A piece of the arguments' JSON text, when this delta carries one. */
  readonly args: string | undefined;
}

/** What an encoder writes for each delta (the frames it returns are sent in order). */
export interface ChunkEncoder {
  text(kind: 'output_text' | 'refusal', text: string): string;
  toolCall(call: ToolCallDelta): string;
}

export class ChatChunkReader {
  /** The last non-null `finish_reason`. */
  finishReason: unknown = undefined;
  /** The stop string that ended the answer, when the upstream names it (vLLM's `stop_reason`, beside the finish reason). */
  matchedStop: unknown = undefined;
  /** The model refused (a `refusal` delta came, even an empty one). */
  refused = false;
  /** The answer's text and arguments, kept only to estimate output tokens when the upstream reports none. */
  output = '';
  /** Chat indexes of the calls started so far. */
  private readonly calls = new Set<number>();
  private lastCall = -1;

  constructor(private readonly encoder: ChunkEncoder) {}

  /** The frames one chunk (its JSON text) becomes; '' for a chunk without a choice (a usage-only chunk). */
  read(chunk: string): string {
    const value = JSON.parse(chunk) as Json;
    const choice: unknown = Array.isArray(value.choices) ? value.choices[0] : undefined;
    if (!isPlainObject(choice)) return '';
    let out = '';
    const delta = choice.delta;
    if (isPlainObject(delta)) {
      const text = nonEmpty(delta.content);
      if (text !== undefined) out += this.text('output_text', text);
      if (delta.refusal !== undefined && delta.refusal !== null) this.refused = true;
      const refusal = nonEmpty(delta.refusal);
      if (refusal !== undefined) out += this.text('refusal', refusal);
      if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) if (isPlainObject(call)) out += this.toolCall(call);
    }
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) {
      this.finishReason = choice.finish_reason;
      this.matchedStop = choice.stop_reason;
    }
    return out;
  }

  private text(kind: 'output_text' | 'refusal', text: string): string {
    this.output += text;
    return this.encoder.text(kind, text);
  }

  private toolCall(call: Json): string {
    const fn = isPlainObject(call.function) ? call.function : {};
    const index = typeof call.index === 'number' ? call.index : typeof call.id === 'string' ? this.lastCall + 1 : Math.max(this.lastCall, 0);
    if (!this.calls.has(index)) {
      this.calls.add(index);
      this.lastCall = index;
    }
    const args = nonEmpty(fn.arguments);
    if (args !== undefined) this.output += args;
    return this.encoder.toolCall({
      index,
      id: nonEmpty(call.id),
      name: typeof fn.name === 'string' ? fn.name : undefined,
      args,
    });
  }
}

/** A delta's text (content, refusal, arguments) when there is some. */
function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
