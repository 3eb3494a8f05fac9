/**
 * Whether an upstream error body says "the prompt does not fit this model's
 * context". Providers say it in their own words (recorded examples with their
 * sources: fixtures/context-length-errors.json), so this is a table of phrases
 * rather than one code. It only reads the body; classify-error.ts decides what
 * follows from it.
 */

/** Lower-case phrases, each seen in a real provider answer (see the fixtures). */
const PHRASES: readonly string[] = [
  'context_length_exceeded', // OpenAI, Groq: error.code
  'exceed_context_size_error', // llama.cpp server: error.type
  'maximum context length', // OpenAI, OpenRouter, vLLM: "This model's / endpoint's maximum context length is N tokens"
  'exceeds the available context size', // llama.cpp server, older and newer wording
  'exceeds the maximum number of tokens allowed', // Google Gemini: "The input token count (N) exceeds …"
  'tokens + `max_new_tokens` must be', // Together / text-generation-inference input validation
  'must be less than the context length', // Together's documented 403
  'prompt is too long', // Anthropic ("prompt is too long: N tokens > M maximum"), also relayed by OpenRouter
  'exceed context limit', // Anthropic: "input length and `max_tokens` exceed context limit: N + M > L"
];

/** Error bodies are short; a long one is read only this far (it is never buffered further here). */
const SCAN_LIMIT = 4096; // characters

export function saysContextExceeded(body: string): boolean {
  const text = (body.length > SCAN_LIMIT ? body.slice(0, SCAN_LIMIT) : body).toLowerCase();
  for (const phrase of PHRASES) if (text.includes(phrase)) return true;
  return false;
}
