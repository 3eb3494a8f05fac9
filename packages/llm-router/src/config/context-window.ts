import type { ProviderConfig, Settings } from '../types.js';

/**
 * The `num_ctx` the gateway sends an Ollama target when neither the config nor
 * the provider's `options` name one. Ollama's own default has changed between
 * releases (2048, then 4096, then sized by VRAM), and a prompt longer than it is
 * silently cut, so the gateway always sends the window it checks against.
 */
export const OLLAMA_DEFAULT_NUM_CTX = 4096; // tokens

/**
 * A target's context window in tokens: `settings.context_window` (target ←
 * alias ← provider ← global), else for Ollama the provider's `options.num_ctx`
 * or OLLAMA_DEFAULT_NUM_CTX. Undefined for an OpenAI-compatible target that
 * declares none: its window is unknown and requests are never checked against it.
 */
export function contextWindowOf(provider: ProviderConfig, settings: Settings): number | undefined {
  if (settings.contextWindow !== undefined) return settings.contextWindow;
  if (provider.type !== 'ollama') return undefined;
  const numCtx = provider.options.num_ctx;
  return typeof numCtx === 'number' && Number.isInteger(numCtx) && numCtx > 0 ? numCtx : OLLAMA_DEFAULT_NUM_CTX;
}
