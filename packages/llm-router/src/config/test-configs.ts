/** YAML snippets shared by the config, plan and health tests (not part of the public API). */

/** The plan's original format: only `aliases:`, each a chain of strings. */
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
`;

/** The four aliases besides the one a test writes itself, as simple chains. */
export function otherAliases(except: string): string {
  return ['mana/fast-text', 'mana/long-form', 'mana/structured', 'mana/reasoning', 'mana/vision']
    .filter((name) => name !== except)
    .map((name) => `  ${name}: [ollama/gemma3:4b]\n`)
    .join('');
}

/** A full config whose `mana/long-form` is `longForm` (indented YAML under the alias key). */
export function withLongForm(longForm: string, head = ''): string {
  return `${head}aliases:\n  mana/long-form:\n${longForm}${otherAliases('mana/long-form')}`;
}
