// Near-misses: none of these is a provider model id in a value position.
import type { Ollama } from 'ollama/browser';
export * from 'groq/sdk';
// A comment naming groq/llama-3.1-8b-instant is not code.
/* nor is 'ollama/gemma3:12b' in a block comment */
export const repo = 'https://github.com/ollama/ollama';
export const docs = 'see https://console.groq.com/docs/models for groq/llama-3.1-8b-instant';
export const sentence = 'ollama is down, falling back to groq';
export const word = 'ollama';
export const bareSlash = 'ollama/';
export const spaced = 'groq/ llama';
export const alias = 'mana/long-form';
export const otherProvider = 'openai/gpt-4o';
export const prefixed = 'my-ollama/gemma3:4b';
export const relative = './ollama/models.json';
export const upper = 'Ollama/gemma3:4b';
export const late = `${'x'}ollama/gemma3:4b`;
export const url = `https://example.com/ollama/${'v1'}`;
export const regex = /groq\/llama-3\.1-8b-instant/;
export const lazy = (): Promise<unknown> => import('ollama/browser');
export const client: Ollama | undefined = undefined;
export const quoteInside = "it's ollama/gemma3:4b";
