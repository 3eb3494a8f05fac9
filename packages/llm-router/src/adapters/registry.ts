import type { ProviderConfig, ProviderType } from '../types.js';
import type { Adapter } from './adapter.js';
import { anthropicDialect } from './anthropic.js';
import { HttpAdapter } from './http-adapter.js';
import { Dispatchers, splitBaseUrl } from './http.js';
import { ollamaDialect } from './ollama.js';
import { openAICompatibleDialect } from './openai-compatible.js';

/**
 * Provider type → adapter, plus the lifecycle of the keep-alive pools all
 * adapters share. One registry per router.
 */
export class AdapterRegistry {
  private readonly dispatchers = new Dispatchers();
  private readonly adapters: Record<ProviderType, Adapter> = {
    openai: new HttpAdapter(openAICompatibleDialect, this.dispatchers),
    ollama: new HttpAdapter(ollamaDialect, this.dispatchers),
    anthropic: new HttpAdapter(anthropicDialect, this.dispatchers),
  };

  /** The adapter for a provider type; undefined for a type this build does not know. */
  get(type: ProviderType): Adapter | undefined {
    return this.adapters[type];
  }

  listModels(provider: ProviderConfig, signal: AbortSignal): Promise<string[]> {
    const adapter = this.get(provider.type);
    if (adapter === undefined) return Promise.reject(new Error(`unknown provider type ${String(provider.type)}`));
    return adapter.listModels(provider, signal);
  }

  /** After a reload: close the pools of upstreams no provider uses any more. */
  retain(providers: Iterable<ProviderConfig>): Promise<void> {
    const origins = new Set<string>();
    for (const p of providers) {
      try {
        origins.add(splitBaseUrl(p.baseUrl).origin);
      } catch {
        // An invalid base URL never got a pool.
      }
    }
    return this.dispatchers.retain(origins);
  }

  close(): Promise<void> {
    return this.dispatchers.close();
  }
}
