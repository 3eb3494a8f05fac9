import type { ProviderConfig } from '../types.js';

/**
 * Why a provider cannot be called, or undefined when it can. Kept apart from
 * ProviderConfig (a public type) so the key's *variable name* can be named in
 * the message — "missing api key (GROQ_API_KEY)" tells an operator what to set —
 * while the key's value is never part of any message.
 */
const apiKeyVariables = new WeakMap<ProviderConfig, readonly string[]>();

/** Called by the loader: remembers which environment variables a provider's `api_key` named. */
export function rememberApiKeyVariables(provider: ProviderConfig, variables: readonly string[]): void {
  if (variables.length > 0) apiKeyVariables.set(provider, variables);
}

/** How the pre-check's `unconfigured` skip reason starts (`unconfigured: missing api key`); the views show only the rest. */
export const UNCONFIGURED_PREFIX = 'unconfigured: ';

/** `missing api key (GROQ_API_KEY)` for a provider that needs a key and has none; else undefined. */
export function unconfiguredReason(provider: ProviderConfig): string | undefined {
  if (!provider.requiresApiKey || (provider.apiKey !== undefined && provider.apiKey !== '')) return undefined;
  const variables = apiKeyVariables.get(provider);
  return variables === undefined ? 'missing api key' : `missing api key (${variables.join(', ')})`;
}
