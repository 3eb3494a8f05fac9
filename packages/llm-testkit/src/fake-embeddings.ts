import { isObject } from './dialect.js';
import type { EmbeddingAnswer } from './types.js';

/** Dimensions of a fake vector when neither the behaviour nor the request's `dimensions` says. */
export const DEFAULT_EMBEDDING_DIMENSIONS = 8;

/** The vectors a fake answers with, before a dialect renders them, plus the prompt token count. */
export interface ResolvedEmbeddings {
  readonly vectors: number[][];
  readonly promptTokens: number;
  /** The request asked for `encoding_format: base64` (OpenAI dialect only). */
  readonly base64: boolean;
}

/** The texts of an embeddings request (`input`: a string, strings, a token array or token arrays). */
function inputs(body: unknown): unknown[] {
  const input = isObject(body) ? body.input : undefined;
  if (input === undefined) return [];
  if (!Array.isArray(input)) return [input];
  return input.length > 0 && typeof input[0] === 'number' ? [input] : input;
}

/**
 * Deterministic vectors: the same text and model give the same vector (so a
 * test can compare answers), another model or fake name gives another one (so a
 * test can tell which target answered). Faults: `count` (wrong number of
 * vectors) and `mixedDimensions` (the last vector one float shorter).
 */
export function resolveEmbeddings(body: unknown, model: string, name: string | undefined, e: EmbeddingAnswer | undefined): ResolvedEmbeddings {
  const texts = inputs(body);
  const asked = isObject(body) && typeof body.dimensions === 'number' ? body.dimensions : undefined;
  const dims = e?.dimensions ?? asked ?? DEFAULT_EMBEDDING_DIMENSIONS;
  const count = e?.count ?? texts.length;
  const vectors: number[][] = [];
  for (let i = 0; i < count; i++) {
    const text = JSON.stringify(texts[i % Math.max(1, texts.length)] ?? '');
    const length = e?.mixedDimensions === true && i === count - 1 && count > 1 ? dims - 1 : dims;
    vectors.push(vectorOf(`${model}|${name ?? ''}|${text}`, length));
  }
  const promptTokens = e?.promptTokens ?? texts.reduce<number>((sum, t) => sum + Math.max(1, Math.ceil(JSON.stringify(t).length / 4)), 0);
  return { vectors, promptTokens, base64: isObject(body) && body.encoding_format === 'base64' };
}

/** FNV-1a of the seed, then a small LCG: floats in (-1, 1) that float32 holds exactly enough. */
function vectorOf(seed: string, length: number): number[] {
  let h = 0x811c9dc5;
  for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 0x01000193) >>> 0;
  const out: number[] = [];
  for (let i = 0; i < length; i++) {
    h = (Math.imul(h, 1664525) + 1013904223) >>> 0;
    out.push(Math.fround(h / 0x80000000 - 1));
  }
  return out;
}

/** Floats → base64 of their little-endian float32 bytes, as OpenAI sends `encoding_format: base64`. */
export function floatsToBase64(values: readonly number[]): string {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => bytes.writeFloatLE(v, i * 4));
  return bytes.toString('base64');
}
