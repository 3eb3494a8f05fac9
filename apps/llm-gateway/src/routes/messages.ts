/**
 * POST /v1/messages: Anthropic's Messages API (anthropic-version 2023-06-01)
 * on the routed pipeline, for Anthropic's clients (Claude Code, the Anthropic
 * SDK, the AI SDK's anthropic provider). The request is translated into the
 * router's chat request (anthropic/decode-messages.ts), the answer back into
 * Anthropic's message (anthropic/message-json.ts) or event stream
 * (anthropic/message-stream.ts), errors into Anthropic's shape
 * (anthropic/anthropic-errors.ts); failover, health, records and metrics are
 * the pipeline's, as for chat completions. An `anthropic` target gets the
 * client's own request instead, and its answer, in Anthropic's dialect
 * already, is relayed as written (anthropic/native-answer.ts).
 */
import { anthropicErrorBody, anthropicUpstreamError } from '../anthropic/anthropic-errors.js';
import { decodeMessagesRequest } from '../anthropic/decode-messages.js';
import { anthropicMessage } from '../anthropic/message-json.js';
import { AnthropicStream } from '../anthropic/message-stream.js';
import { NativeStream, nativeMessage } from '../anthropic/native-answer.js';
import type { InboundCodec } from './inbound-codec.js';

export const MESSAGES: InboundCodec = {
  path: '/v1/messages',
  api: 'messages',
  operation: 'chat',
  // Anthropic's clients log and report `request-id`.
  requestIdHeaders: ['request-id'],
  decode: decodeMessagesRequest,
  encodeJson: (result, request) => (result.dialect === 'anthropic' ? nativeMessage(result, request) : anthropicMessage(result, request)),
  encodeUpstreamError: anthropicUpstreamError,
  streamEncoder: (result, request) => (result.dialect === 'anthropic' ? new NativeStream(result, request) : new AnthropicStream(result, request)),
  encodeError: anthropicErrorBody,
};
