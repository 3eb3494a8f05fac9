import type { ProviderConfig } from '../types.js';
import {
  InvalidResponseError,
  type Adapter,
  type AdapterCall,
  type AdapterResponse,
  type AdapterStream,
} from './adapter.js';
import { bodyTimeout, type Dispatchers, httpFailure, isObject, providerHeaders, relayHeaders, splitBaseUrl } from './http.js';
import { OpenAIStreamDecoder } from './openai-stream.js';

/** What a provider needs on every request, computed once per provider object. */
interface Prepared {
  readonly origin: string;
  readonly chatPath: string;
  readonly modelsPath: string;
  readonly postHeaders: Record<string, string>;
  readonly getHeaders: Record<string, string>;
}

/**
 * One adapter for every OpenAI-compatible server (Groq, OpenRouter, Together,
 * Google's OpenAI endpoint, vLLM, llama.cpp): they differ only in data — base
 * URL, key, extra headers — which the provider config carries.
 */
export class OpenAICompatibleAdapter implements Adapter {
  private readonly prepared = new WeakMap<ProviderConfig, Prepared>();

  constructor(private readonly dispatchers: Dispatchers) {}

  async complete(call: AdapterCall): Promise<AdapterResponse> {
    const res = await this.post(call, false);
    call.firstByte?.stop();
    if (res.statusCode >= 300) return httpFailure(res.statusCode, res.headers, res.body);
    const text = await res.body.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new InvalidResponseError('response is not JSON');
    }
    if (!isObject(body)) throw new InvalidResponseError('response is not a JSON object');
    return { ok: true, status: res.statusCode, body, headers: relayHeaders(res.headers) };
  }

  async stream(call: AdapterCall): Promise<AdapterStream> {
    const res = await this.post(call, true);
    if (res.statusCode >= 300) return httpFailure(res.statusCode, res.headers, res.body);
    return {
      ok: true,
      status: res.statusCode,
      headers: relayHeaders(res.headers),
      body: res.body,
      decoder: new OpenAIStreamDecoder(),
    };
  }

  async listModels(provider: ProviderConfig, signal: AbortSignal): Promise<string[]> {
    const p = this.prepare(provider);
    const timeout = provider.settings.probeTimeoutMs;
    const res = await this.dispatchers.get(p.origin, provider.settings.connectTimeoutMs).request({
      method: 'GET',
      path: p.modelsPath,
      headers: p.getHeaders,
      signal,
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
    if (res.statusCode >= 300) {
      await res.body.dump();
      throw new Error(`models listing answered ${res.statusCode}`);
    }
    const body: unknown = await res.body.json();
    const data = isObject(body) ? body.data : undefined;
    if (!Array.isArray(data)) throw new Error('models listing has no data array');
    const ids: string[] = [];
    for (const item of data) if (isObject(item) && typeof item.id === 'string') ids.push(item.id);
    return ids;
  }

  private post(call: AdapterCall, stream: boolean) {
    const p = this.prepare(call.provider);
    // Pass the caller's body through; only `model` (and `stream`, if it disagrees) change.
    const body = call.body.stream === stream ? { ...call.body, model: call.target.model } : { ...call.body, model: call.target.model, stream };
    return this.dispatchers.get(p.origin, call.target.settings.connectTimeoutMs).request({
      method: 'POST',
      path: p.chatPath,
      headers: p.postHeaders,
      body: JSON.stringify(body),
      signal: call.signal,
      headersTimeout: 0, // timed precisely by the attempt's first-byte timer instead
      bodyTimeout: bodyTimeout(call.target),
    });
  }

  private prepare(provider: ProviderConfig): Prepared {
    let p = this.prepared.get(provider);
    if (p === undefined) {
      const { origin, basePath } = splitBaseUrl(provider.baseUrl);
      p = {
        origin,
        chatPath: basePath + '/chat/completions',
        modelsPath: basePath + '/models',
        postHeaders: providerHeaders(provider, true),
        getHeaders: providerHeaders(provider, false),
      };
      this.prepared.set(provider, p);
    }
    return p;
  }
}
