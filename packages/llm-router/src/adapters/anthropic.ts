import { ANTHROPIC_VERSION } from '../anthropic/mapping.js';
import { InvalidResponseError, UnsupportedRequestError } from './adapter.js';
import { anthropicUnsupportedParameter } from './anthropic-parameters.js';
import { toAnthropicRequest } from './anthropic-request.js';
import { toOpenAICompletion, withSafeToolUseIds } from './anthropic-response.js';
import { AnthropicStreamDecoder } from './anthropic-stream.js';
import type { Dialect } from './http-adapter.js';
import { openAICompatibleDialect } from './openai-compatible.js';
import { isPlainObject } from '../plain-object.js';

/**
 * Anthropic's Messages API (`POST /v1/messages`, `GET /v1/models`, base URL
 * `https://api.anthropic.com`), translated to and from the OpenAI shape. The
 * key goes in `x-api-key` (a credential header, redacted like Authorization),
 * with the API version the translation is written for; a client's
 * `anthropic-beta` header is passed on as it came. A client's request written
 * in this protocol (`original` in `anthropic`) is not translated at all: it
 * goes upstream with only `model` replaced, and its answer comes back as
 * Anthropic wrote it (see Dialect.nativeProtocol).
 */
export const anthropicDialect: Dialect = {
  nativeProtocol: 'anthropic',
  chatPath: '/v1/messages',
  // Never called: toEmbeddingBody refuses before any network call.
  embedPath: '/v1/embeddings',
  // The listing's largest page, so `check_models` sees every model at once (the default page is 20).
  modelsPath: '/v1/models?limit=1000',
  listingName: 'models listing',

  unsupportedParameter: anthropicUnsupportedParameter,

  protocolHeaders(apiKey) {
    const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
    if (apiKey) headers['x-api-key'] = apiKey;
    return headers;
  },

  // A client's betas (prompt caching, a longer context) are Anthropic's to read: sent on as they came.
  callHeaders: (call) => {
    const beta = call.clientHeaders?.['anthropic-beta'];
    return typeof beta !== 'string' || beta === '' ? undefined : { 'anthropic-beta': beta };
  },

  toRequestBody(call, stream) {
    // Translation may throw UnsupportedRequestError before any network call.
    return toAnthropicRequest(call.body, call.target.model, stream);
  },

  parseCompletion(native) {
    if (isPlainObject(native) && native.type === 'error') throw new InvalidResponseError('anthropic answered an error with status 200');
    return toOpenAICompletion(native);
  },

  // Relayed as Anthropic wrote it, unless a tool_use id must change (tool-call-ids.ts).
  nativeAnswer: withSafeToolUseIds,

  newStreamDecoder(maxEventBytes, clientAskedUsage, native) {
    return new AnthropicStreamDecoder(maxEventBytes, !clientAskedUsage, native);
  },

  toEmbeddingBody() {
    throw new UnsupportedRequestError('anthropic has no embeddings API');
  },

  parseEmbeddings() {
    throw new InvalidResponseError('anthropic has no embeddings API');
  },

  // The same `{data: [{id, …}]}` shape as OpenAI's listing.
  parseModelList: (body) => openAICompatibleDialect.parseModelList(body),
};
