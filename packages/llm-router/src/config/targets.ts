/** `provider/model` splits at the first `/`: `openrouter/anthropic/claude-3.5-haiku` → `openrouter` + `anthropic/claude-3.5-haiku`. */
export function splitTarget(id: string): { provider: string; model: string } | undefined {
  const slash = id.indexOf('/');
  if (slash <= 0 || slash === id.length - 1) return undefined;
  const provider = id.slice(0, slash);
  const model = id.slice(slash + 1);
  if (/\s/.test(id)) return undefined;
  return { provider, model };
}
