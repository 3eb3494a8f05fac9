/**
 * A native answer to a Messages client: an `anthropic` target got the
 * client's request as written (the router's `original`) and answered in
 * Anthropic's protocol (`result.protocol === 'anthropic'`). Relayed as the upstream wrote
 * it, with one change: `model` is the alias the client asked for (the name
 * the client knows), as in a translated answer (answer-model.ts).
 *
 *   JSON    the upstream's text with the value of its top-level `model` replaced
 *   stream  each event as `event: <type>` + `data: <the upstream's JSON>`,
 *           message_start's `message.model` replaced; message_stop is the
 *           upstream's own event, so the end adds nothing
 *
 * Thinking blocks with their signatures, citations, server tool results and
 * cache usage therefore reach the client as Anthropic sent them.
 */
import type { JsonResult, StreamResult } from '@mana/llm-router';
import type { GatewayError } from '../../http/errors.js';
import { scanJsonText } from '../../http/json-depth.js';
import { isPlainObject } from '../../plain-object.js';
import type { DecodedRequest, StreamEncoder } from '../codec.js';
import { anthropicErrorEvent } from './anthropic-errors.js';
import { modelOf } from '../answer-model.js';

/** The answer's JSON with `model` replaced: spliced into the upstream's text where its one top-level `model` is, else serialised again. */
export function nativeMessage(result: JsonResult, request: DecodedRequest): string {
  const model = modelOf(request, result.outcome);
  const text = result.text;
  // The router parsed this text already: its depth is no question here.
  const span = text === undefined ? undefined : scanJsonText(text, Number.POSITIVE_INFINITY).model;
  if (text !== undefined && span !== undefined) return text.slice(0, span.start) + JSON.stringify(model) + text.slice(span.end);
  return JSON.stringify({ ...result.body, model });
}

/** Anthropic names each SSE event as its data's `type`, which it writes first. */
const LEADING_TYPE = /^\{\s*"type"\s*:\s*"([a-z_]+)"/;

/** The encoder of a native stream: Anthropic's events, framed as Anthropic frames them. */
export class NativeStream implements StreamEncoder {
  private started = false;

  constructor(
    private readonly result: StreamResult,
    private readonly request: DecodedRequest,
  ) {}

  event(data: string): string {
    const type = LEADING_TYPE.exec(data)?.[1];
    if (type !== undefined && type !== 'message_start') return `event: ${type}\ndata: ${data}\n\n`;
    const event = JSON.parse(data) as Record<string, unknown>;
    // An event without a type (none Anthropic sends today) goes out under SSE's default name.
    const name = typeof event.type === 'string' ? event.type : 'message';
    if (name !== 'message_start' || this.started) return `event: ${name}\ndata: ${data}\n\n`;
    this.started = true;
    if (isPlainObject(event.message)) event.message.model = modelOf(this.request, this.result.outcome);
    return `event: message_start\ndata: ${JSON.stringify(event)}\n\n`;
  }

  /** The upstream's message_stop was the last event relayed. */
  end(): string {
    return '';
  }

  failed(error: GatewayError): string {
    return anthropicErrorEvent(error);
  }
}
