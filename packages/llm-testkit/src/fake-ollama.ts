import { argumentsAsObject, isObject, type Dialect, type RenderedStream, type ResolvedAnswer } from './dialect.js';
import { startFakeUpstream } from './server.js';
import type { FakeUpstream, FakeUpstreamOptions } from './types.js';

const line = (v: unknown): string => `${JSON.stringify(v)}\n`;

// Plausible fixed durations (ns) so clients that compute tokens/s do not divide by zero.
const TIMINGS = { total_duration: 12_000_000, load_duration: 1_000_000, prompt_eval_duration: 3_000_000, eval_duration: 8_000_000 };

function counts(a: ResolvedAnswer) {
  return { prompt_eval_count: a.usage.prompt_tokens, eval_count: a.usage.completion_tokens };
}

function toolCalls(a: ResolvedAnswer) {
  // Ollama sends arguments as an object, not a JSON string.
  return a.toolCalls.map((t, index) => ({
    ...(t.id === undefined ? {} : { id: t.id }),
    function: { index, name: t.function.name, arguments: argumentsAsObject(t.function.arguments) },
  }));
}

export const ollamaDialect: Dialect = {
  kind: 'ollama',
  chatPaths: new Set(['/api/chat']),
  embedPaths: new Set(['/api/embed']),
  probePaths: new Set(['/api/tags']),
  streamContentType: 'application/x-ndjson',

  // Ollama streams by default: only an explicit `stream: false` gives one JSON body.
  wantsStream: (body) => !(isObject(body) && body.stream === false),
  wantsUsage: () => true,

  renderJson(a, model) {
    const message: Record<string, unknown> = { role: 'assistant', content: a.content ?? '' };
    if (a.toolCalls.length > 0) message.tool_calls = toolCalls(a);
    return Buffer.from(
      JSON.stringify({ model, created_at: new Date().toISOString(), message, done_reason: a.finishReason ?? 'stop', done: true, ...TIMINGS, ...counts(a) }),
    );
  },

  renderStream(a, model): RenderedStream {
    const createdAt = new Date().toISOString();
    const frames = a.parts.map((content) => line({ model, created_at: createdAt, message: { role: 'assistant', content }, done: false }));
    for (const call of toolCalls(a)) {
      frames.push(line({ model, created_at: createdAt, message: { role: 'assistant', content: '', tool_calls: [call] }, done: false }));
    }
    const end = line({
      model,
      created_at: createdAt,
      message: { role: 'assistant', content: '' },
      done_reason: a.finishReason ?? 'stop',
      done: true,
      ...TIMINGS,
      ...counts(a),
    });
    return {
      frames: frames.map((f) => Buffer.from(f)),
      end: Buffer.from(end),
      full: Buffer.from(frames.join('') + end),
      error: Buffer.from(line({ error: 'fake upstream stream error' })),
    };
  },

  // Ollama ignores `encoding_format`: always floats, and the token count as `prompt_eval_count`.
  renderEmbeddings: (e, model) =>
    Buffer.from(JSON.stringify({ model, embeddings: e.vectors, total_duration: TIMINGS.total_duration, load_duration: TIMINGS.load_duration, prompt_eval_count: e.promptTokens })),

  // Ollama has no terminator line: an empty stream is a 200 with no lines at all.
  emptyStream: () => Buffer.alloc(0),
  malformedJson: () => Buffer.from('{"model":"fake","message":{'),
  malformedStream: () => Buffer.from('{not json\n'),
  roleOnlyChunk: (model) => Buffer.from(line({ model, created_at: new Date().toISOString(), message: { role: 'assistant', content: '' }, done: false })),
  endlessLineStart: (model) => Buffer.from(`{"model":${JSON.stringify(model)},"message":{"role":"assistant","content":"`),
  errorBody: (status, model) =>
    Buffer.from(
      JSON.stringify({ error: status === 404 ? `model "${model}" not found, try pulling it first` : `fake upstream error ${status}` }),
    ),
  modelsBody: (models) =>
    Buffer.from(
      JSON.stringify({
        models: models.map((name) => ({
          name,
          model: name,
          modified_at: '2026-01-01T00:00:00Z',
          size: 1_000_000,
          digest: 'fake',
          details: { parent_model: '', format: 'gguf', family: 'fake', families: ['fake'], parameter_size: '1B', quantization_level: 'Q4_0' },
        })),
      }),
    ),
  extraGet: (path) => (path === '/' ? Buffer.from('Ollama is running') : undefined),
};

/** An Ollama-native upstream: POST /api/chat (NDJSON streaming by default), POST /api/embed, GET /api/tags. */
export function startFakeOllama(options?: FakeUpstreamOptions): Promise<FakeUpstream> {
  return startFakeUpstream(ollamaDialect, options);
}
