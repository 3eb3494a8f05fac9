import { parseConfig } from '../config/load-config.js';
import type { ConfigSnapshot } from '../types.js';
import { EMBED_ALIAS_LINE } from '../config/test-configs.js';

/** A small config for the health tests (not part of the public API). */
export function healthTestSnapshot(extra = '', env: Record<string, string> = { GROQ_API_KEY: 'gsk-test-secret-123' }): ConfigSnapshot {
  return parseConfig(
    `providers:
  local: { type: openai, base_url: http://127.0.0.1:9/v1, api_key_required: false, check_models: true }
  loose: { type: openai, base_url: http://127.0.0.1:10/v1, api_key_required: false }
${extra}aliases:
  mana/fast-text: [ollama/gemma3:4b, groq/llama-3.1-8b-instant]
  mana/long-form: [ollama/gemma3:12b, together/meta-llama/Llama-3.3-70B]
  mana/structured: [local/qwen, loose/qwen]
  mana/reasoning: [groq/llama-3.3-70b-versatile]
  mana/vision: [ollama/llava]
${EMBED_ALIAS_LINE}`,
    { source: 'health-test.yaml', env },
  );
}
