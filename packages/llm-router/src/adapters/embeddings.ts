import type { EmbeddingRequestBody, ProviderConfig, Usage } from '../types.js';
import { InvalidResponseError, UnsupportedRequestError } from './adapter.js';
import { isPlainObject } from '../plain-object.js';
import { checkedUsage } from './token-usage.js';

/**
 * The OpenAI embeddings shape both dialects answer in, and Ollama's native
 * `/api/embed` translated to and from it.
 *
 * OpenAI: `{ object: 'list', data: [{ object: 'embedding', index, embedding }], model, usage: { prompt_tokens, total_tokens } }`,
 * where `embedding` is an array of floats, or with `encoding_format: 'base64'`
 * the little-endian float32 bytes in base64 (what the `openai` SDK asks for by default).
 * Ollama: `{ model, embeddings: [[…floats]], prompt_eval_count }`.
 */

/** How many vectors the request asks for: one per string or token array. */
export function inputCount(input: EmbeddingRequestBody['input']): number {
  if (typeof input === 'string') return 1;
  // A flat array of numbers is ONE token array; an array of strings or of token arrays is a batch.
  if (input.length > 0 && typeof input[0] === 'number') return 1;
  return input.length;
}

/** An OpenAI embedding list as the upstream sent it; throws when it is not that shape. */
export function openAIEmbeddingList(body: unknown): Record<string, unknown> {
  if (!isPlainObject(body) || !Array.isArray(body.data)) throw new InvalidResponseError('embeddings response has no data array');
  for (const item of body.data) {
    if (!isPlainObject(item)) throw new InvalidResponseError('embeddings response data holds a non-object');
    const e = item.embedding;
    if (typeof e !== 'string' && !Array.isArray(e)) throw new InvalidResponseError('embeddings response item has no embedding');
  }
  return body;
}

/** `usage` of an embedding list (`prompt_tokens`, `total_tokens`; never completion tokens). */
export function embeddingUsage(value: unknown): Usage | undefined {
  return isPlainObject(value) ? checkedUsage({ prompt: value.prompt_tokens, completion: 0, total: value.total_tokens }) : undefined;
}

/** The number of floats in one `embedding` (float array, or base64 float32 bytes); NaN when malformed. */
export function dimensionsOf(embedding: unknown): number {
  if (Array.isArray(embedding)) return embedding.length;
  if (typeof embedding !== 'string') return Number.NaN;
  const bytes = Buffer.byteLength(embedding, 'base64'); // computed from the length, nothing decoded
  return bytes % 4 === 0 ? bytes / 4 : Number.NaN;
}

/**
 * The index of the first element of one `embedding` that is not a finite
 * number, or undefined when all are. Float arrays: `null`, strings, objects, and
 * `1e400` (which JSON.parse reads as Infinity) are not; base64: the float32
 * bytes of NaN or ±Infinity are not (decoded to floats they would become `null`).
 * Call after `dimensionsOf` said the embedding is well formed.
 */
export function firstNonFinite(embedding: unknown): number | undefined {
  if (Array.isArray(embedding)) {
    for (let i = 0; i < embedding.length; i++) {
      const v: unknown = embedding[i];
      if (typeof v !== 'number' || !Number.isFinite(v)) return i;
    }
    return undefined;
  }
  if (typeof embedding !== 'string') return 0;
  const bytes = Buffer.from(embedding, 'base64');
  for (let i = 0; i + 4 <= bytes.length; i += 4) {
    if (!Number.isFinite(bytes.readFloatLE(i))) return i / 4;
  }
  return undefined;
}

/** Floats → base64 of their little-endian float32 bytes (what OpenAI sends for `encoding_format: base64`). */
export function floatsToBase64(values: readonly number[]): string {
  const floats = Float32Array.from(values);
  if (LITTLE_ENDIAN) return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
  const bytes = Buffer.alloc(values.length * 4);
  for (let i = 0; i < values.length; i++) bytes.writeFloatLE(values[i]!, i * 4);
  return bytes.toString('base64');
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** OpenAI embeddings request → Ollama `/api/embed` body. Ollama takes text only: token arrays are refused before any call. */
export function toOllamaEmbedRequest(body: EmbeddingRequestBody, model: string, provider: ProviderConfig): Record<string, unknown> {
  const input = body.input;
  if (typeof input !== 'string' && !input.every((item) => typeof item === 'string')) {
    throw new UnsupportedRequestError('ollama embeddings take text input, not token arrays');
  }
  const out: Record<string, unknown> = { model, input };
  if (typeof body.dimensions === 'number') out.dimensions = body.dimensions;
  if (Object.keys(provider.options).length > 0) out.options = provider.options;
  if (body.keep_alive !== undefined) out.keep_alive = body.keep_alive;
  if (typeof body.truncate === 'boolean') out.truncate = body.truncate;
  return out;
}

/** Ollama `/api/embed` answer → an OpenAI embedding list (`usage` from its `prompt_eval_count`). */
export function fromOllamaEmbeddings(native: unknown, model: string, encoding: EmbeddingRequestBody['encoding_format']): Record<string, unknown> {
  if (!isPlainObject(native) || !Array.isArray(native.embeddings)) {
    throw new InvalidResponseError(isPlainObject(native) && native.error !== undefined ? 'ollama answered an error with status 200' : 'embed response has no embeddings array');
  }
  const data = native.embeddings.map((vector: unknown, index) => {
    if (!Array.isArray(vector) || !vector.every((v) => typeof v === 'number')) throw new InvalidResponseError('embed response holds a non-numeric vector');
    return { object: 'embedding', index, embedding: encoding === 'base64' ? floatsToBase64(vector as number[]) : vector };
  });
  const tokens = typeof native.prompt_eval_count === 'number' ? native.prompt_eval_count : 0;
  return { object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}

/**
 * Puts every vector of a checked list in the encoding the caller asked for
 * (absent means `float`, as for OpenAI), whatever the upstream sent: a provider
 * that ignores `encoding_format` must not hand the `openai` SDK, which asks for
 * base64 and decodes it, a float array (or the reverse). True when a vector was re-encoded.
 */
export function matchEncoding(list: Record<string, unknown>, encoding: EmbeddingRequestBody['encoding_format']): boolean {
  const data = list.data as Record<string, unknown>[];
  let changed = false;
  for (const item of data) {
    const e = item.embedding;
    if (encoding === 'base64' && Array.isArray(e)) item.embedding = floatsToBase64(e as number[]);
    else if (encoding !== 'base64' && typeof e === 'string') item.embedding = base64ToFloats(e);
    else continue;
    changed = true;
  }
  return changed;
}

function base64ToFloats(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  const out = new Array<number>(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}
