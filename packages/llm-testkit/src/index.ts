export { startFakeOpenAI } from './fake-openai.js';
export { startFakeOllama } from './fake-ollama.js';
export { closeFakes, providersYaml, startFakes, type FakeKind, type Fakes } from './fake-set.js';
export { startFakeAnthropic } from './fake-anthropic.js';
export { startGpuBox } from './gpu-box.js';
export type { GpuBox, GpuBoxOptions, GpuBoxStats } from './gpu-box.js';
export type { FakeAnthropicOptions } from './fake-anthropic.js';
export { refusingPort } from './ports.js';
export { startOtlpReceiver } from './otlp-receiver.js';
export type { OtlpBehavior, OtlpExport, OtlpReceiver, OtlpReceiverOptions } from './otlp-receiver.js';
export { decodeJsonTraces, decodeProtobufTraces } from './otlp-spans.js';
export type { ReceivedSpan, ReceivedSpanEvent, SpanAttributes, SpanAttributeValue, SpanKindName, SpanStatusName } from './otlp-spans.js';
export { startGatewayProcess } from './gateway-process.js';
export { startReaper } from './reaper.js';
export type { Reaper, ReaperJob } from './reaper.js';
export { aliasesYaml, chatOnce, TEST_EMBEDDING_SPACE, waitUntil } from './gateway-client.js';
export { seededRandom } from './seeded-random.js';
export { startTestPostgres, postgresBinDir, TEST_DATABASE_URL_VARIABLE } from './test-postgres.js';
export type { TestPostgres } from './test-postgres.js';
export { DEFAULT_EMBEDDING_DIMENSIONS } from './fake-embeddings.js';
export type { GatewayCommand, GatewayExit, GatewayLogLine, GatewayProcess, GatewayProcessOptions } from './gateway-process.js';
export type { FakeQuota } from './quota.js';
export type {
  AnswerBehavior,
  EmbeddingAnswer,
  FakeBehavior,
  FakeBehaviorKind,
  FakeScript,
  FakeUpstream,
  FakeUpstreamOptions,
  FakeUsage,
  RecordedRequest,
  ToolCall,
} from './types.js';
