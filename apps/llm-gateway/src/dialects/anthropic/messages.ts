/**
 * POST /v1/messages: Anthropic's Messages API (anthropic-version 2023-06-01)
 * on the routed pipeline, for Anthropic's clients (Claude Code, the Anthropic
 * SDK, the AI SDK's anthropic provider). The request is translated into the
 * router's chat request (decode-messages.ts), the answer back into
 * Anthropic's message (message-json.ts) or event stream
 * (message-stream.ts), errors into Anthropic's shape
 * (anthropic-errors.ts); failover, health, records and metrics are
 * the pipeline's, as for chat completions. An `anthropic` target gets the
 * client's request as written instead, and its answer, in Anthropic's
 * protocol already, is relayed as written (native-answer.ts).
 */
import { anthropicErrorBody, anthropicUpstreamError } from './anthropic-errors.js';
import { decodeMessagesRequest } from './decode-messages.js';
import { anthropicMessage } from './message-json.js';
import { AnthropicStream } from './message-stream.js';
import { NativeStream, nativeMessage } from './native-answer.js';
import type { InboundCodec } from '../codec.js';

export const MESSAGES: InboundCodec = {
  path: '/v1/messages',
  api: 'messages',
  operation: 'chat',
  // Anthropic's clients log and report `request-id`.
  requestIdHeaders: ['request-id'],
  decode: decodeMessagesRequest,
  encodeJson: (result, request) => (result.protocol === 'anthropic' ? nativeMessage(result, request) : anthropicMessage(result, request)),
  encodeUpstreamError: anthropicUpstreamError,
  streamEncoder: (result, request) => (result.protocol === 'anthropic' ? new NativeStream(result, request) : new AnthropicStream(result, request)),
  encodeError: anthropicErrorBody,
};
