import { InvalidResponseError } from './adapter.js';
import { openAIEmbeddingList } from './embeddings.js';
import type { Dialect } from './http-adapter.js';
import { isPlainObject } from '../plain-object.js';
import { OpenAIStreamDecoder } from './openai-stream.js';
import { passThrough } from './pass-through.js';
import { clientAskedUsage, withUsage } from './stream-usage.js';
import { ToolCallIds } from './tool-call-ids.js';

/**
 * One dialect for every OpenAI-compatible server (Groq, OpenRouter, Together,
 * Google's OpenAI endpoint, vLLM, llama.cpp): they differ only in data — base
 * URL, key, extra headers — which the provider config carries.
 */
export const openAICompatibleDialect: Dialect = {
  chatPath: '/chat/completions',
  embedPath: '/embeddings',
  modelsPath: '/models',
  listingName: 'models listing',

  // Passed through as sent: the upstream itself says what it does not support.
  unsupportedParameter: () => undefined,

  toRequestBody(call, stream) {
    // Pass the caller's body through; only `model` (and `stream`, if it disagrees) change,
    // and a stream always asks for usage (the decoder hides it again from a client that did not).
    const streamAgrees = call.body.stream === stream;
    if (!stream || clientAskedUsage(call.body)) return passThrough(call, streamAgrees ? {} : { stream });
    const stream_options = withUsage(call.body.stream_options);
    return passThrough(call, streamAgrees ? { stream_options } : { stream, stream_options });
  },

  parseCompletion(body) {
    if (!isPlainObject(body)) throw new InvalidResponseError('response is not a JSON object');
    // The same object (relayed as the upstream wrote it) unless a tool-call id had to change.
    return new ToolCallIds().completion(body);
  },

  newStreamDecoder(maxEventBytes, clientAsked) {
    return new OpenAIStreamDecoder(maxEventBytes, !clientAsked);
  },

  toEmbeddingBody(call) {
    // `input`, `encoding_format`, `dimensions`, `user` pass through: the upstream speaks this shape.
    return passThrough(call, {});
  },

  parseEmbeddings(body) {
    return openAIEmbeddingList(body);
  },

  parseModelList(body) {
    const data = isPlainObject(body) ? body.data : undefined;
    if (!Array.isArray(data)) throw new Error('models listing has no data array');
    const ids: string[] = [];
    for (const item of data) if (isPlainObject(item) && typeof item.id === 'string') ids.push(item.id);
    return ids;
  },
};
