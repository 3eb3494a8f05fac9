/**
 * OpenAI's dialect on the routed pipeline: the codec of chat completions and
 * embeddings. It is the router's own dialect, so the encoders pass the
 * router's values through: the upstream's JSON text as it wrote it, its
 * stream events as `data:` frames ending with `data: [DONE]`, OpenAI-shaped
 * errors (http/errors.ts) and upstream refusals (http/upstream-error-body.ts).
 * Its results are always in that dialect: only a request with an `original`
 * in another protocol (Messages) is ever answered natively, and these decoders set none.
 */
import type { Operation } from '@mana/llm-router';
import { errorBody } from '../../http/errors.js';
import { upstreamErrorBody } from '../../http/upstream-error-body.js';
import type { InboundApi } from '../inbound-api.js';
import type { Decoded, InboundCodec, StreamEncoder } from '../codec.js';

/** One shared encoder: the frames depend on nothing but the event, so a stream needs no state of its own. */
const OPENAI_SSE: StreamEncoder = {
  event: (chunk) => `data: ${chunk}\n\n`,
  end: () => 'data: [DONE]\n\n',
  // No [DONE]: the error event is the stream's last word.
  failed: (error) => `data: ${errorBody(error)}\n\n`,
};

export function openAiCodec(path: string, api: InboundApi, operation: Operation, decode: (parsed: unknown) => Decoded): InboundCodec {
  return {
    path,
    api,
    operation,
    requestIdHeaders: [],
    decode,
    // The upstream's own text when the router took its answer as it is: the same JSON, not serialised a second time.
    encodeJson: (result) => result.text ?? JSON.stringify(result.body),
    encodeUpstreamError: (result) => upstreamErrorBody(result.status, result.contentType, result.body),
    streamEncoder: () => OPENAI_SSE,
    encodeError: errorBody,
  };
}
