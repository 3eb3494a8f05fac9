// Unusual syntax: tagged templates, `as const`, keys, enums, types, nesting.
const tag = (strings: TemplateStringsArray, ...values: unknown[]): string => String.raw({ raw: strings }, ...values);
export const tagged = tag`groq/llama-3.1-8b-instant`;
export const taggedHead = tag`ollama/${'gemma3'}:4b`;
export const chain = ['ollama/gemma3:4b', 'groq/llama-3.3-70b-versatile'] as const;
export const prices = { 'groq/llama-3.3-70b-versatile': 0.59, ollama: 0, 'ollama/': 1 };
export enum Legacy {
  Fast = 'ollama/gemma3:4b',
}
export class Pins {
  'google/gemini-2.0-flash' = true;
}
export const computed = { ['ollama/llava:7b']: 1 };
export const nested = `model: ${`groq/llama-3.1-8b-instant`}`;
export const empty = ``;
export const escaped = 'groq\/llama-3.1-8b-instant';
