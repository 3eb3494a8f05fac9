import type { IncomingHttpHeaders } from 'node:http';
import type { ResolvedEmbeddings } from './fake-embeddings.js';
import type { FakeUsage, ToolCall } from './types.js';

/** An answer with every default resolved; what the dialects render. */
export interface ResolvedAnswer {
  /** null only for OpenAI tool-call answers without text. */
  content: string | null;
  /** Content split for streaming (empty when there is no text). */
  parts: string[];
  toolCalls: ToolCall[];
  usage: FakeUsage;
  /** As given by the behaviour; each dialect applies its own default. */
  finishReason: string | undefined;
  /** The stop sequence that ended the answer: Anthropic's `stop_sequence`, vLLM's `stop_reason` on the finishing choice (OpenAI dialect). */
  stopSequence: string | undefined;
  /** OpenAI refusal text (then content is null and `parts` split the refusal). */
  refusal: string | undefined;
  /** Anthropic only: a thinking block's text. */
  thinking: string | undefined;
}

/** A stream rendered once to bytes, so serving it is a few socket writes. */
export interface RenderedStream {
  /** One element per content or tool-call chunk (what chunk counts refer to). */
  frames: Buffer[];
  /** Finish chunk(s), usage and terminator. */
  end: Buffer;
  /** frames + end, for the unpaced fast path. */
  full: Buffer;
  /** The dialect's in-band error event. */
  error: Buffer;
}

/**
 * What differs between the OpenAI-compatible and the Ollama-native wire formats. The
 * fault machinery (pacing, cuts, hangs, status) is shared and lives in respond.ts.
 */
export interface Dialect {
  readonly kind: 'openai' | 'ollama' | 'anthropic';
  readonly chatPaths: ReadonlySet<string>;
  readonly embedPaths: ReadonlySet<string>;
  readonly probePaths: ReadonlySet<string>;
  readonly streamContentType: string;
  /** Ollama streams unless told `stream: false`; OpenAI only with `stream: true`. */
  wantsStream(body: unknown): boolean;
  /** OpenAI: `stream_options.include_usage`; Ollama always reports counts. */
  wantsUsage(body: unknown): boolean;
  renderJson(answer: ResolvedAnswer, model: string): Buffer;
  renderStream(answer: ResolvedAnswer, model: string, includeUsage: boolean): RenderedStream;
  /** An embeddings answer in the dialect's shape. */
  renderEmbeddings(e: ResolvedEmbeddings, model: string): Buffer;
  /** Complete body of a stream with no chunks at all. */
  emptyStream(): Buffer;
  malformedJson(): Buffer;
  malformedStream(): Buffer;
  /** One stream chunk that carries the role and no content (never a delta), with its delimiter. */
  roleOnlyChunk(model: string): Buffer;
  /** The start of a stream line that carries content and never ends (no newline follows). */
  endlessLineStart(model: string): Buffer;
  /** Default error body for a status fault. */
  errorBody(status: number, model: string): Buffer;
  modelsBody(models: readonly string[]): Buffer;
  /** Extra GET routes (e.g. Ollama's "Ollama is running" root); not counted as probes. */
  extraGet?(path: string): Buffer | undefined;
  /**
   * A request the upstream refuses before any behaviour applies (Anthropic: no `x-api-key`, no
   * `anthropic-version`, no `max_tokens`): the status and body to answer. The request is recorded all the same.
   */
  refuse?(headers: IncomingHttpHeaders, body: unknown, probe: boolean): { readonly status: number; readonly body: Buffer } | undefined;
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** Split text into at most n pieces of near-equal length, by code point (never splits a surrogate pair). */
export function splitContent(text: string, n: number): string[] {
  if (text === '') return [];
  const cps = Array.from(text);
  const count = Math.max(1, Math.min(Math.floor(n), cps.length));
  const parts: string[] = [];
  for (let i = 0; i < count; i++) {
    parts.push(cps.slice(Math.floor((i * cps.length) / count), Math.floor(((i + 1) * cps.length) / count)).join(''));
  }
  return parts;
}

export const argumentsAsString = (a: string | Record<string, unknown>): string => (typeof a === 'string' ? a : JSON.stringify(a));

export function argumentsAsObject(a: string | Record<string, unknown>): Record<string, unknown> {
  if (typeof a !== 'string') return a;
  try {
    const parsed: unknown = JSON.parse(a);
    return isObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}
