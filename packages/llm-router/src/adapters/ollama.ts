import { InvalidResponseError } from './adapter.js';
import { fromOllamaEmbeddings, toOllamaEmbedRequest } from './embeddings.js';
import type { Dialect } from './http-adapter.js';
import { isPlainObject } from '../plain-object.js';
import { ollamaUnsupportedParameter } from './ollama-parameters.js';
import { toOllamaRequest } from './ollama-request.js';
import { OllamaStreamDecoder, toOpenAICompletion } from './ollama-response.js';

/** Ollama's native API (`/api/chat`, `/api/embed`, `/api/tags`), translated to and from the OpenAI shape. */
export const ollamaDialect: Dialect = {
  chatPath: '/api/chat',
  embedPath: '/api/embed',
  modelsPath: '/api/tags',
  listingName: 'model listing',

  unsupportedParameter: ollamaUnsupportedParameter,

  toRequestBody(call, stream) {
    // Translation may throw UnsupportedRequestError before any network call.
    return toOllamaRequest(call.body, call.target.model, call.provider, stream, call.target.contextWindow);
  },

  parseCompletion(native) {
    if (isPlainObject(native) && native.error !== undefined) throw new InvalidResponseError('ollama answered an error with status 200');
    return toOpenAICompletion(native);
  },

  newStreamDecoder(maxEventBytes) {
    return new OllamaStreamDecoder(maxEventBytes);
  },

  toEmbeddingBody(call) {
    return toOllamaEmbedRequest(call.body, call.target.model, call.provider);
  },

  parseEmbeddings(native, call) {
    return fromOllamaEmbeddings(native, call.target.model, call.body.encoding_format);
  },

  parseModelList(body) {
    const models = isPlainObject(body) ? body.models : undefined;
    if (!Array.isArray(models)) throw new Error('model listing has no models array');
    const names: string[] = [];
    for (const m of models) {
      if (!isPlainObject(m)) continue;
      if (typeof m.name === 'string') names.push(m.name);
      if (typeof m.model === 'string' && m.model !== m.name) names.push(m.model);
    }
    return names;
  },
};
