export { startFakeOpenAI } from './fake-openai.js';
export { startFakeOllama } from './fake-ollama.js';
export { refusingPort } from './ports.js';
export type {
  AnswerBehavior,
  FakeBehavior,
  FakeBehaviorKind,
  FakeUpstream,
  FakeUpstreamOptions,
  FakeUsage,
  RecordedRequest,
  ToolCall,
} from './types.js';
