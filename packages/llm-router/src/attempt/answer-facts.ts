/**
 * What an upstream answer says of itself — its id, the model that answered,
 * its finish reasons — for a request's observer (AttemptObserver, the
 * gateway's traces). Read only when the request has an observer, from what
 * the attempt loop holds anyway: the OpenAI-shaped body of a JSON answer, the
 * text of a stream's first event and of its finish events (parsed again here:
 * two small events per traced stream, none without an observer).
 */
import { finishReasonOf } from '../adapters/anthropic-response.js';
import { choiceFinishReasons } from '../adapters/choice-finish-reasons.js';
import { isPlainObject } from '../plain-object.js';
import type { AnswerFacts, Usage } from '../types.js';

const NONE: readonly string[] = [];

/** An OpenAI-shaped answer: a `chat.completion` (every protocol's JSON answer is one by now) or an embedding `list`, and its usage. */
export function answerFacts(body: Record<string, unknown>, usage: Usage | undefined): AnswerFacts {
  return { id: stringOf(body.id), model: stringOf(body.model), finishReasons: choiceFinishReasons(body.choices), usage };
}

/**
 * A stream's first event, as its consumer gets it: a `chat.completion.chunk`,
 * or for a native Anthropic stream its `message_start` event.
 */
export function streamStartFacts(data: string): AnswerFacts {
  return new StreamStartFacts(data);
}

/**
 * Read when first asked, not at the commit: the commit is on the way to the
 * stream's first byte, and an observer (a trace's attempt span) reads these
 * only when the stream is over.
 */
class StreamStartFacts implements AnswerFacts {
  private source: Record<string, unknown> | null | undefined;

  constructor(private readonly data: string) {}

  get id(): string | undefined {
    return stringOf(this.parsed()?.id);
  }

  get model(): string | undefined {
    return stringOf(this.parsed()?.model);
  }

  get finishReasons(): readonly string[] {
    return NONE;
  }

  get usage(): Usage | undefined {
    return undefined;
  }

  private parsed(): Record<string, unknown> | null {
    if (this.source === undefined) {
      const event = parseObject(this.data);
      this.source = event === undefined ? null : event.type === 'message_start' && isPlainObject(event.message) ? event.message : event;
    }
    return this.source;
  }
}

/** The finish reasons of one stream event that finishes a choice: a chunk's, or a native Anthropic `message_delta`'s stop reason. */
export function streamFinishReasons(data: string): readonly string[] {
  const event = parseObject(data);
  if (event === undefined) return NONE;
  if (event.type === 'message_delta') return [finishReasonOf(isPlainObject(event.delta) ? event.delta.stop_reason : undefined)];
  return choiceFinishReasons(event.choices);
}


function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The event was decoded before (it is valid JSON); an object or nothing. */
function parseObject(data: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(data);
    return isPlainObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
