/**
 * The names on our spans, declared once: OpenTelemetry's semantic
 * conventions where they have one (HTTP server and client, GenAI client
 * inference and embeddings), the gateway's own under `mana.`. The README's
 * OpenTelemetry section lists the same table for users; prompt and
 * completion content is never among them.
 */
import type { Operation } from '@mana/llm-router';

export const ATTR = {
  // HTTP (the SERVER span)
  httpMethod: 'http.request.method',
  httpRoute: 'http.route',
  urlPath: 'url.path',
  urlScheme: 'url.scheme',
  httpStatus: 'http.response.status_code',
  userAgent: 'user_agent.original',
  errorType: 'error.type',
  // Both spans
  serverAddress: 'server.address',
  serverPort: 'server.port',
  genAiOperation: 'gen_ai.operation.name',
  // GenAI (the CLIENT spans)
  genAiProvider: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  requestTemperature: 'gen_ai.request.temperature',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  finishReasons: 'gen_ai.response.finish_reasons',
  timeToFirstChunk: 'gen_ai.response.time_to_first_chunk',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  // The gateway's own
  api: 'mana.api',
  requestId: 'mana.request_id',
  model: 'mana.model',
  alias: 'mana.alias',
  resolved: 'mana.resolved',
  attempts: 'mana.attempts',
  target: 'mana.target',
  reason: 'mana.reason',
  attemptOutcome: 'mana.attempt.outcome',
  attemptReason: 'mana.attempt.reason',
  failedOver: 'mana.failed_over',
  streamEnd: 'mana.stream.end',
} as const;

/** The SERVER span's event for a target skipped without a call (`mana.target`, `mana.reason`). */
export const TARGET_SKIPPED_EVENT = 'mana.target.skipped';

/** `gen_ai.operation.name` of what the router is asked for. */
export const GEN_AI_OPERATION: Readonly<Record<Operation, string>> = { chat: 'chat', embedding: 'embeddings' };

/** The instrumentation scope of our spans. */
export const TRACER_SCOPE = '@mana/llm-gateway';
