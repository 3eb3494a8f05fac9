import type { ProviderConfig } from '../types.js';

/**
 * Whether a provider's `/models` (or Ollama `/api/tags`) listing decides if a
 * target is usable. Ollama lists exactly what is pulled, so it always does;
 * OpenAI-compatible servers opt in with `check_models`, because some list
 * names loosely (aliases, prefixes) and a strict check would skip good targets.
 */
export function listingIsAuthoritative(provider: ProviderConfig): boolean {
  return provider.type === 'ollama' || provider.checkModels;
}

/** True when `model` appears in the listing. Ollama's implicit `:latest` tag counts. */
export function listingHasModel(provider: ProviderConfig, listing: ReadonlySet<string>, model: string): boolean {
  if (listing.has(model)) return true;
  if (provider.type !== 'ollama') return false;
  if (!model.includes(':')) return listing.has(`${model}:latest`);
  return model.endsWith(':latest') && listing.has(model.slice(0, -':latest'.length));
}
