// True positives: every model string below is a finding.
export const fast = 'groq/llama-3.1-8b-instant';
export const local = "ollama/gemma3:12b";
export const routed = `openrouter/anthropic/claude-3.5-haiku`;
export const unlisted = 'together/meta-llama/Llama-3-8b-chat-hf';
export function pick(name: string): string {
  return `ollama/${name}`;
}
export const sized = (size: string): string => `groq/llama-${size}-instant`;
export const request = { model: 'google/gemini-2.0-flash', messages: [] };
export type Pinned = 'ollama/gemma3:4b';
export const both = ['ollama/llava:7b', "groq/deepseek-r1-distill-llama-70b"];
export const direct = 'anthropic/claude-sonnet-4-5';
