/** `provider/model` splits at the first `/`: `openrouter/anthropic/claude-3.5-haiku` → `openrouter` + `anthropic/claude-3.5-haiku`. */
export function splitTarget(id: string): { provider: string; model: string } | undefined {
  const slash = id.indexOf('/');
  if (slash <= 0 || slash === id.length - 1) return undefined;
  const provider = id.slice(0, slash);
  const model = id.slice(slash + 1);
  if (/\s/.test(id)) return undefined;
  return { provider, model };
}

/**
 * Longest model id (characters) a request or a config may name. Real ids are
 * far shorter (the longest public ones are under 100); the limit keeps
 * caller-chosen strings out of logs, headers and messages at any size.
 */
export const MAX_MODEL_ID_LENGTH = 256;

/** Printable ASCII, space to `~`. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * Why a model id (an alias or `provider/model`) cannot be used, or undefined
 * when it can. An id must be printable ASCII because the target that answered
 * is echoed in the `X-Mana-LLM-Resolved` header, and a header value cannot hold
 * control characters or anything past Latin-1 (`up/ok:模型`): writing the head
 * would throw after the upstream already answered. Refused rather than
 * encoded, so the header shows exactly the id that was asked for.
 */
export function modelIdProblem(id: string): string | undefined {
  if (id.length > MAX_MODEL_ID_LENGTH) return `must be at most ${MAX_MODEL_ID_LENGTH} characters, got ${id.length}`;
  if (!PRINTABLE_ASCII.test(id)) return 'may only contain printable ASCII characters (no control characters, no non-ASCII letters)';
  return undefined;
}
