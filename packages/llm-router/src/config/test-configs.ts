/** YAML snippets shared by the config, plan and health tests (not part of the public API). */

/**
 * The required embedding alias as one flow-map line (an embedding alias needs
 * `kind` and `embedding_space`, so it cannot be a bare list).
 */
export const EMBED_ALIAS_LINE = '  mana/embed: { kind: embedding, embedding_space: nomic-embed-text-v1.5, chain: [ollama/nomic-embed-text] }\n';

/** The plan's original format: only `aliases:`, each a chain of strings (plus the one embedding alias). */
export const STRINGS_ONLY = `
aliases:
  mana/fast-text:
    - ollama/gemma3:4b
    - groq/llama-3.1-8b-instant
  mana/long-form:
    - ollama/gemma3:12b
    - groq/llama-3.3-70b-versatile
    - openrouter/anthropic/claude-3.5-haiku
  mana/structured:
    - ollama/qwen2.5:7b
    - groq/llama-3.3-70b-versatile
  mana/reasoning:
    - groq/deepseek-r1-distill-llama-70b
    - openrouter/deepseek/deepseek-r1
  mana/vision:
    - ollama/llava:13b
    - google/gemini-2.0-flash
${EMBED_ALIAS_LINE}`;

/** The required aliases besides the one a test writes itself: chat aliases as simple chains, and `mana/embed`. */
export function otherAliases(except: string): string {
  const chat = ['mana/fast-text', 'mana/long-form', 'mana/structured', 'mana/reasoning', 'mana/vision']
    .filter((name) => name !== except)
    .map((name) => `  ${name}: [ollama/gemma3:4b]\n`)
    .join('');
  return except === 'mana/embed' ? chat : chat + EMBED_ALIAS_LINE;
}

/** A full config whose `mana/long-form` is `longForm` (indented YAML under the alias key). */
export function withLongForm(longForm: string, head = ''): string {
  return `${head}aliases:\n  mana/long-form:\n${longForm}${otherAliases('mana/long-form')}`;
}
