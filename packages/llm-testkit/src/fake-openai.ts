import { argumentsAsString, isObject, type Dialect, type RenderedStream, type ResolvedAnswer } from './dialect.js';
import { floatsToBase64 } from './fake-embeddings.js';
import { startFakeUpstream } from './server.js';
import type { FakeUpstream, FakeUpstreamOptions } from './types.js';

const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));
const sse = (v: unknown): string => `data: ${JSON.stringify(v)}\n\n`;
const DONE = 'data: [DONE]\n\n';

let seq = 0;
// Ids only need to look real and differ between renders; rendering is cached, so this is cheap.
const nextId = (): string => `chatcmpl-fake${(++seq).toString(36)}`;
const now = (): number => Math.floor(Date.now() / 1000);

function totals(u: ResolvedAnswer['usage']) {
  return { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, total_tokens: u.prompt_tokens + u.completion_tokens };
}

const finishReason = (a: ResolvedAnswer): string => a.finishReason ?? (a.toolCalls.length > 0 ? 'tool_calls' : 'stop');

/** vLLM's `stop_reason` (the stop sequence met), only when the behaviour names one. */
const stopReason = (a: ResolvedAnswer): { stop_reason?: string } => (a.stopSequence === undefined ? {} : { stop_reason: a.stopSequence });

function errorObject(status: number, model: string) {
  // Shapes and codes as api.openai.com sends them, so SDKs map them to their error classes.
  if (status === 401) return { message: 'Incorrect API key provided (fake upstream).', type: 'invalid_request_error', param: null, code: 'invalid_api_key' };
  if (status === 404) return { message: `The model \`${model}\` does not exist or you do not have access to it.`, type: 'invalid_request_error', param: null, code: 'model_not_found' };
  if (status === 429) return { message: `Rate limit reached for ${model} (fake upstream).`, type: 'requests', param: null, code: 'rate_limit_exceeded' };
  if (status === 402) return { message: 'Insufficient quota (fake upstream).', type: 'insufficient_quota', param: null, code: 'insufficient_quota' };
  if (status >= 500) return { message: `The server had an error while processing your request (fake upstream ${status}).`, type: 'server_error', param: null, code: null };
  return { message: `Fake upstream error ${status}.`, type: 'invalid_request_error', param: null, code: null };
}

export const openaiDialect: Dialect = {
  kind: 'openai',
  // Also without /v1 so a base URL given with or without it both work.
  chatPaths: new Set(['/v1/chat/completions', '/chat/completions']),
  embedPaths: new Set(['/v1/embeddings', '/embeddings']),
  probePaths: new Set(['/v1/models', '/models']),
  streamContentType: 'text/event-stream; charset=utf-8',

  wantsStream: (body) => isObject(body) && body.stream === true,
  wantsUsage: (body) => isObject(body) && isObject(body.stream_options) && body.stream_options.include_usage === true,

  renderJson(a, model) {
    const message: Record<string, unknown> = { role: 'assistant', content: a.content, refusal: a.refusal ?? null };
    if (a.toolCalls.length > 0) {
      message.tool_calls = a.toolCalls.map((t, i) => ({
        id: t.id ?? `call_fake_${i}`,
        type: 'function',
        function: { name: t.function.name, arguments: argumentsAsString(t.function.arguments) },
      }));
    }
    return json({
      id: nextId(),
      object: 'chat.completion',
      created: now(),
      model,
      system_fingerprint: 'fp_fake',
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(a), ...stopReason(a) }],
      usage: totals(a.usage),
    });
  },

  renderStream(a, model, includeUsage): RenderedStream {
    const head = { id: nextId(), object: 'chat.completion.chunk', created: now(), model, system_fingerprint: 'fp_fake' };
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      sse({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish, ...(finish === null ? {} : stopReason(a)) }] });
    // The role rides on the first delta so "N chunks" means N content/tool deltas exactly.
    const key = a.refusal !== undefined ? 'refusal' : 'content';
    const frames: string[] = a.parts.map((text, i) => chunk(i === 0 ? { role: 'assistant', [key]: text } : { [key]: text }));
    a.toolCalls.forEach((t, i) => {
      const call = { index: i, id: t.id ?? `call_fake_${i}`, type: 'function', function: { name: t.function.name, arguments: argumentsAsString(t.function.arguments) } };
      frames.push(chunk(frames.length === 0 ? { role: 'assistant', content: null, tool_calls: [call] } : { tool_calls: [call] }));
    });
    let end = frames.length === 0 ? chunk({ role: 'assistant', content: '' }) : '';
    end += chunk({}, finishReason(a));
    // As OpenAI does: usage arrives in an extra last chunk with empty choices.
    if (includeUsage) end += sse({ ...head, choices: [], usage: totals(a.usage) });
    end += DONE;
    const frameBufs = frames.map((f) => Buffer.from(f));
    return {
      frames: frameBufs,
      end: Buffer.from(end),
      full: Buffer.from(frames.join('') + end),
      error: Buffer.from(sse({ error: { message: 'Fake upstream stream error.', type: 'server_error', param: null, code: null } })),
    };
  },

  renderEmbeddings: (e, model) =>
    json({
      object: 'list',
      data: e.vectors.map((v, index) => ({ object: 'embedding', index, embedding: e.base64 ? floatsToBase64(v) : v })),
      model,
      usage: { prompt_tokens: e.promptTokens, total_tokens: e.promptTokens },
    }),

  emptyStream: () => Buffer.from(DONE),
  malformedJson: () => Buffer.from('{"id":"chatcmpl-fake","object":"chat.completion","choices":[{'),
  // [DONE] follows so the fault is "unparseable data", not also "cut short".
  malformedStream: () => Buffer.from(`data: {not json\n\n${DONE}`),
  roleOnlyChunk: (model) => Buffer.from(sse({ id: 'chatcmpl-fake-role', object: 'chat.completion.chunk', created: now(), model, choices: [{ index: 0, delta: { role: 'assistant' }, finish_reason: null }] })),
  endlessLineStart: (model) => Buffer.from(`data: {"id":"chatcmpl-fake-line","object":"chat.completion.chunk","model":${JSON.stringify(model)},"choices":[{"index":0,"delta":{"content":"`),
  errorBody: (status, model) => json({ error: errorObject(status, model) }),
  modelsBody: (models) => json({ object: 'list', data: models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'fake' })) }),
};

/** An OpenAI-compatible upstream: POST /v1/chat/completions, POST /v1/embeddings, GET /v1/models. */
export function startFakeOpenAI(options?: FakeUpstreamOptions): Promise<FakeUpstream> {
  return startFakeUpstream(openaiDialect, options);
}
