import { MANA_LLM } from '@mana/llm-aliases';

export const Badge = () => <model-badge model="ollama/gemma3:4b" fallback={'groq/llama-3.3-70b-versatile'} />;
export const Text = () => <p>Runs on ollama/gemma3:4b when local.</p>;
export const Link = () => <a href="https://github.com/ollama/ollama">Ollama</a>;
export const Good = () => <model-badge model={MANA_LLM.FAST_TEXT} />;
