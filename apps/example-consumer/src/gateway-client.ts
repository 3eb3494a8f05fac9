import OpenAI from 'openai';

/** Where the gateway listens unless MANA_LLM_URL says otherwise. */
export const DEFAULT_GATEWAY_URL = 'http://127.0.0.1:3025/v1';

/** The response header naming the provider model that actually answered. */
export const RESOLVED_HEADER = 'x-mana-llm-resolved';

export interface GatewayClientOptions {
  /** OpenAI-compatible base URL of the gateway (default: MANA_LLM_URL, then DEFAULT_GATEWAY_URL). */
  baseURL?: string;
  /** Gateway key when the gateway requires one (default: MANA_LLM_API_KEY). */
  apiKey?: string;
  env?: Record<string, string | undefined>;
}

/**
 * An ordinary OpenAI SDK client pointed at the Mana gateway. Product code needs
 * nothing else: the gateway speaks the OpenAI API and picks the provider.
 */
export function createGatewayClient(options: GatewayClientOptions = {}): OpenAI {
  const env = options.env ?? process.env;
  return new OpenAI({
    baseURL: options.baseURL ?? env.MANA_LLM_URL ?? DEFAULT_GATEWAY_URL,
    // The SDK insists on a key; a gateway without auth ignores it.
    apiKey: options.apiKey ?? env.MANA_LLM_API_KEY ?? 'mana-gateway-no-key',
    maxRetries: 0, // the gateway already fails over between providers
  });
}
