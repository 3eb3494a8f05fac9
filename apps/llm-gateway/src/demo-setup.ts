/**
 * What `pnpm demo` runs the gateway against: fake upstreams from
 * @mana/llm-testkit and the shipped chains with a twist. "ollama" (first in
 * every chain) points at a port nobody listens on, "groq" at a local fake that
 * answers like the real OpenAI-compatible API. The docs' examples are tested
 * against this same setup (e2e/docs-examples.e2e.test.ts), so what a reader
 * runs against the demo is what the tests run.
 */
import { MANA_LLM, MANA_LLM_ALIASES } from '@mana/llm-aliases';
import { refusingPort, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';

/** The fake cloud's answer to every chat request. */
export const DEMO_ANSWER = 'Paris is the capital of France.';

export interface DemoUpstreams {
  /** Where the demo's "ollama" points: a loopback port that refuses connections. */
  readonly ollamaUrl: string;
  /** The fake "groq". */
  readonly cloud: FakeUpstream;
  close(): Promise<void>;
}

export async function startDemoUpstreams(): Promise<DemoUpstreams> {
  const deadPort = await refusingPort();
  const cloud = await startFakeOpenAI({ name: 'demo' });
  // Streamed in a few chunks, so a streaming request visibly streams.
  cloud.on('*', { kind: 'answer', content: DEMO_ANSWER, chunks: 5, chunkIntervalMs: 60 });
  return { ollamaUrl: `http://127.0.0.1:${deadPort}`, cloud, close: () => cloud.close() };
}

/** The provider models of each alias: a local one (Ollama, down) and a cloud one (the fake). */
const CHAINS: Record<string, readonly [string, string]> = {
  [MANA_LLM.FAST_TEXT]: ['gemma3:4b', 'llama-3.1-8b-instant'],
  [MANA_LLM.LONG_FORM]: ['gemma3:12b', 'llama-3.3-70b-versatile'],
  [MANA_LLM.STRUCTURED]: ['qwen2.5:7b', 'llama-3.3-70b-versatile'],
  [MANA_LLM.REASONING]: ['qwen3:14b', 'deepseek-r1-distill-llama-70b'],
  [MANA_LLM.VISION]: ['gemma3:12b', 'llama-3.2-90b-vision-preview'],
  [MANA_LLM.EMBED]: ['nomic-embed-text', 'nomic-embed-text-v1.5'],
};

/** The demo's alias config (YAML): every MANA_LLM alias, "ollama" first, "groq" behind. */
export function demoConfigYaml(upstreams: Pick<DemoUpstreams, 'ollamaUrl' | 'cloud'>): string {
  let yaml =
    `providers:\n` +
    `  ollama: { type: ollama, base_url: "${upstreams.ollamaUrl}" }\n` +
    `  groq: { type: openai, base_url: "${upstreams.cloud.baseUrl}", api_key: "demo-key-not-secret" }\n` +
    `aliases:\n`;
  for (const info of MANA_LLM_ALIASES) {
    const [local, remote] = CHAINS[info.alias]!;
    // An embedding alias names its one vector space (both targets serve the same weights).
    const kind = info.kind === 'embedding' ? `    kind: embedding\n    embedding_space: nomic-embed-text-v1.5\n` : '';
    yaml += `  ${info.alias}:\n    description: "${info.description}"\n${kind}    chain: ["ollama/${local}", "groq/${remote}"]\n`;
  }
  return yaml;
}
