/**
 * The router's `chat.completion.chunk` events → the Responses event stream,
 * one encoder per stream, in the order OpenAI sends it:
 *
 *   response.created, response.in_progress      (the response, `in_progress`, no output yet)
 *   per output item, in order (output_index 0, 1, …):
 *     response.output_item.added
 *     message:        response.content_part.added
 *                     response.output_text.delta … (response.refusal.delta … for a refusal)
 *                     response.output_text.done    (response.refusal.done)
 *                     response.content_part.done
 *     function_call:  response.function_call_arguments.delta …
 *                     response.function_call_arguments.done
 *     response.output_item.done
 *   response.completed, or response.incomplete  (the whole response, with usage)
 *
 * `sequence_number` counts every event from 0. The ids (response-ids.ts) are
 * decided once: every event names an item by the id and output_index the
 * final object gives it. An item is closed when the next one starts or the
 * answer ends. A stream that breaks after its head ends with
 * `response.failed` (the response so far, status `failed`, its `error`),
 * never with response.completed (see relay-stream.ts). Each chunk is parsed
 * once here: the router hands its events on as JSON text.
 */
import type { StreamResult } from '@mana/llm-router';
import { modelOf } from '../answer-model.js';
import type { GatewayError } from '../../http/errors.js';
import { ChatChunkReader, type ChunkEncoder, type ToolCallDelta } from '../chat-chunks.js';
import type { DecodedRequest, StreamEncoder } from '../codec.js';
import { ResponseIds } from './response-ids.js';
import {
  echoText,
  functionCallItem,
  incompleteReason,
  messageItem,
  nowSeconds,
  outputTextPart,
  refusalPart,
  responseText,
  usageText,
  type ItemStatus,
  type ResponseFields,
} from './response-object.js';
import { calledTool } from './tool-namespaces.js';

type PartKind = 'output_text' | 'refusal';

interface MessageItem {
  readonly kind: 'message';
  readonly index: number;
  readonly id: string;
  /** The JSON text of its finished parts. */
  readonly parts: string[];
  /** The part being written, if any (its content_index is `parts.length`). */
  part: { readonly kind: PartKind; text: string } | undefined;
}

interface CallItem {
  readonly kind: 'function_call';
  readonly index: number;
  readonly id: string;
  readonly callId: string;
  name: string;
  args: string;
  closed: boolean;
}

/** Per part kind: its empty part, its delta and done events, and its done event's field. */
const PARTS = {
  output_text: { empty: outputTextPart('""'), part: outputTextPart, delta: 'response.output_text.delta', done: 'response.output_text.done', field: 'text', logprobs: ',"logprobs":[]' },
  refusal: { empty: refusalPart('""'), part: refusalPart, delta: 'response.refusal.delta', done: 'response.refusal.done', field: 'refusal', logprobs: '' },
} as const;

export class ResponsesStream implements StreamEncoder, ChunkEncoder {
  private readonly chunks = new ChatChunkReader(this);
  private readonly ids = new ResponseIds();
  private readonly createdAt = nowSeconds();
  private readonly echo: string;
  private seq = 0;
  private started = false;
  /** Items opened so far: the next one's output_index. */
  private items = 0;
  /** The JSON text of each closed item, by output_index. */
  private readonly closed: string[] = [];
  private open: MessageItem | CallItem | undefined = undefined;
  /** Per chat tool-call index: its function_call item. */
  private readonly calls = new Map<number, CallItem>();

  constructor(
    private readonly result: StreamResult,
    private readonly request: DecodedRequest,
  ) {
    this.echo = echoText(request);
  }

  event(chunk: string): string {
    return (this.started ? '' : this.start()) + this.chunks.read(chunk);
  }

  end(result: StreamResult): string {
    let out = this.started ? '' : this.start();
    const incomplete = incompleteReason(this.chunks.finishReason);
    // The last item is the one a cut answer left unfinished.
    out += this.closeItem(incomplete === undefined ? 'completed' : 'incomplete');
    const response = this.response({
      status: incomplete === undefined ? 'completed' : 'incomplete',
      incomplete,
      output: `[${this.closed.join(',')}]`,
      usage: usageText(result.usage, this.request, () => this.chunks.output),
    });
    return out + this.frame(incomplete === undefined ? 'response.completed' : 'response.incomplete', `"response":${response}`);
  }

  /** The response so far, `failed`; the open item as far as it got, `incomplete`, without its done events (it never finished). */
  failed(error: GatewayError): string {
    const out = this.started ? '' : this.start();
    const output = [...this.closed];
    if (this.open !== undefined) output.push(this.itemText(this.open, 'incomplete'));
    const usage = this.result.usage;
    const response = this.response({
      status: 'failed',
      output: `[${output.join(',')}]`,
      // The spec's ResponseErrorCode is a fixed list: the gateway's own code goes in the message.
      error: { code: error.status === 429 ? 'rate_limit_exceeded' : 'server_error', message: `${error.message} (${error.code})` },
      usage: usage === undefined ? undefined : usageText(usage, this.request, () => this.chunks.output),
    });
    return out + this.frame('response.failed', `"response":${response}`);
  }

  private response(fields: Pick<ResponseFields, 'status' | 'output'> & Partial<ResponseFields>): string {
    return responseText({ id: this.ids.response, createdAt: this.createdAt, model: modelOf(this.request, this.result.outcome), echo: this.echo, ...fields });
  }

  private frame(type: string, fields: string): string {
    return `event: ${type}\ndata: {"type":"${type}",${fields},"sequence_number":${this.seq++}}\n\n`;
  }

  private start(): string {
    this.started = true;
    const response = this.response({ status: 'in_progress', output: '[]' });
    return this.frame('response.created', `"response":${response}`) + this.frame('response.in_progress', `"response":${response}`);
  }

  /** A text or refusal delta: into the open message's part of that kind, else a new part (and item) first. */
  text(kind: PartKind, delta: string): string {
    let out = '';
    let item = this.open;
    if (item?.kind !== 'message') {
      out += this.closeItem('completed');
      const index = this.items++;
      item = { kind: 'message', index, id: this.ids.message(index), parts: [], part: undefined };
      this.open = item;
      out += this.frame('response.output_item.added', `"output_index":${index},"item":${messageItem(item.id, 'in_progress', [])}`);
    }
    if (item.part?.kind !== kind) {
      out += this.closePart(item);
      item.part = { kind, text: '' };
      out += this.frame('response.content_part.added', `${this.at(item)},"part":${PARTS[kind].empty}`);
    }
    item.part!.text += delta;
    return out + this.frame(PARTS[kind].delta, `${this.at(item)},"delta":${JSON.stringify(delta)}${PARTS[kind].logprobs}`);
  }

  /** `item_id`, `output_index` and `content_index` of a message's open part. */
  private at(item: MessageItem): string {
    return `"item_id":"${item.id}","output_index":${item.index},"content_index":${item.parts.length}`;
  }

  private closePart(item: MessageItem): string {
    const part = item.part;
    if (part === undefined) return '';
    const spec = PARTS[part.kind];
    const textJson = JSON.stringify(part.text);
    const partJson = spec.part(textJson);
    const out =
      this.frame(spec.done, `${this.at(item)},"${spec.field}":${textJson}${spec.logprobs}`) + this.frame('response.content_part.done', `${this.at(item)},"part":${partJson}`);
    item.parts.push(partJson);
    item.part = undefined;
    return out;
  }

  /** A call's first delta opens its function_call item; argument text goes to the call's own item. */
  toolCall(call: ToolCallDelta): string {
    let out = '';
    let item = this.calls.get(call.index);
    if (item === undefined) {
      out += this.closeItem('completed');
      const outputIndex = this.items++;
      item = {
        kind: 'function_call',
        index: outputIndex,
        id: this.ids.functionCall(outputIndex),
        callId: this.ids.callId(call.id, outputIndex),
        name: call.name ?? '',
        args: '',
        closed: false,
      };
      this.calls.set(call.index, item);
      this.open = item;
      out += this.frame('response.output_item.added', `"output_index":${outputIndex},"item":${this.itemText(item, 'in_progress')}`);
    } else if (item.name === '' && call.name !== undefined) item.name = call.name;
    const args = call.args;
    if (args === undefined) return out;
    item.args += args;
    // Servers stream calls one after another; should one go back to an earlier
    // call, its arguments still reach that call, and the final object has them whole.
    if (item.closed) this.closed[item.index] = this.itemText(item, 'completed');
    return out + this.frame('response.function_call_arguments.delta', `"item_id":"${item.id}","output_index":${item.index},"delta":${JSON.stringify(args)}`);
  }

  private itemText(item: MessageItem | CallItem, status: ItemStatus): string {
    if (item.kind === 'function_call') return functionCallItem(item.id, status, item.callId, calledTool(item.name, this.request.toolNames), item.args);
    const parts = item.part === undefined ? item.parts : [...item.parts, PARTS[item.part.kind].part(JSON.stringify(item.part.text))];
    return messageItem(item.id, status, parts);
  }

  /** Closes the open item: its done events, then output_item.done with the item as the final object has it. */
  private closeItem(status: ItemStatus): string {
    const item = this.open;
    if (item === undefined) return '';
    this.open = undefined;
    let out = '';
    if (item.kind === 'message') out += this.closePart(item);
    else {
      item.closed = true;
      out += this.frame(
        'response.function_call_arguments.done',
        `"item_id":"${item.id}","output_index":${item.index},"name":${JSON.stringify(calledTool(item.name, this.request.toolNames).name)},"arguments":${JSON.stringify(item.args)}`,
      );
    }
    const text = this.itemText(item, status);
    this.closed[item.index] = text;
    return out + this.frame('response.output_item.done', `"output_index":${item.index},"item":${text}`);
  }
}
