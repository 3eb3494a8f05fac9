import type { ProviderType } from '../types.js';

/**
 * A provider as written in the YAML (before interpolation). Built-ins use the
 * same shape, so a file may override a single field (`groq: { api_key: … }`)
 * and inherit the rest.
 */
export interface RawProviderSpec {
  readonly type: ProviderType;
  readonly base_url: string;
  readonly api_key?: string;
  /**
   * Whether a trace context (`traceparent`) goes upstream with each call. A
   * cloud API has no use for our trace ids and should not learn them, so the
   * built-in cloud providers say false; every other provider (a self-hosted
   * server, the built-in ollama) defaults to true.
   */
  readonly propagate_trace?: boolean;
}

/**
 * Providers usable without any `providers:` section. Keys come from the
 * environment; a cloud provider whose variable is unset is reported as
 * unconfigured and skipped without a network call.
 */
// No prototype: the map is indexed with provider names from files and admin
// paths, and a provider named `constructor` must find no built-in.
export const BUILT_IN_PROVIDERS: Readonly<Record<string, RawProviderSpec>> = Object.freeze(
  Object.assign<Record<string, RawProviderSpec>, Record<string, RawProviderSpec>>(Object.create(null), {
    ollama: { type: 'ollama', base_url: '${OLLAMA_URL:-http://localhost:11434}' },
    groq: { type: 'openai', base_url: 'https://api.groq.com/openai/v1', api_key: '${GROQ_API_KEY}', propagate_trace: false },
    openrouter: { type: 'openai', base_url: 'https://openrouter.ai/api/v1', api_key: '${OPENROUTER_API_KEY}', propagate_trace: false },
    together: { type: 'openai', base_url: 'https://api.together.xyz/v1', api_key: '${TOGETHER_API_KEY}', propagate_trace: false },
    google: {
      type: 'openai',
      base_url: 'https://generativelanguage.googleapis.com/v1beta/openai',
      api_key: '${GOOGLE_API_KEY}',
      propagate_trace: false,
    },
    // Anthropic's own Messages API (not OpenAI-compatible): adapters/anthropic.ts.
    anthropic: { type: 'anthropic', base_url: 'https://api.anthropic.com', api_key: '${ANTHROPIC_API_KEY}', propagate_trace: false },
  }),
);
