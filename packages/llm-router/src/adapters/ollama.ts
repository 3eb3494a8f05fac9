import type { ProviderConfig } from '../types.js';
import {
  InvalidResponseError,
  type Adapter,
  type AdapterCall,
  type AdapterResponse,
  type AdapterStream,
} from './adapter.js';
import { bodyTimeout, type Dispatchers, httpFailure, isObject, providerHeaders, relayHeaders, splitBaseUrl } from './http.js';
import { toOllamaRequest } from './ollama-request.js';
import { OllamaStreamDecoder, toOpenAICompletion } from './ollama-response.js';

interface Prepared {
  readonly origin: string;
  readonly chatPath: string;
  readonly tagsPath: string;
  readonly postHeaders: Record<string, string>;
  readonly getHeaders: Record<string, string>;
}

/** Ollama's native API (`/api/chat`, `/api/tags`), translated to and from the OpenAI shape. */
export class OllamaAdapter implements Adapter {
  private readonly prepared = new WeakMap<ProviderConfig, Prepared>();

  constructor(private readonly dispatchers: Dispatchers) {}

  async complete(call: AdapterCall): Promise<AdapterResponse> {
    const res = await this.post(call, false);
    call.firstByte?.stop();
    if (res.statusCode >= 300) return httpFailure(res.statusCode, res.headers, res.body);
    const text = await res.body.text();
    let native: unknown;
    try {
      native = JSON.parse(text);
    } catch {
      throw new InvalidResponseError('response is not JSON');
    }
    if (isObject(native) && native.error !== undefined) throw new InvalidResponseError('ollama answered an error with status 200');
    return { ok: true, status: res.statusCode, body: toOpenAICompletion(native), headers: relayHeaders(res.headers) };
  }

  async stream(call: AdapterCall): Promise<AdapterStream> {
    const res = await this.post(call, true);
    if (res.statusCode >= 300) return httpFailure(res.statusCode, res.headers, res.body);
    return {
      ok: true,
      status: res.statusCode,
      headers: relayHeaders(res.headers),
      body: res.body,
      decoder: new OllamaStreamDecoder(),
    };
  }

  async listModels(provider: ProviderConfig, signal: AbortSignal): Promise<string[]> {
    const p = this.prepare(provider);
    const timeout = provider.settings.probeTimeoutMs;
    const res = await this.dispatchers.get(p.origin, provider.settings.connectTimeoutMs).request({
      method: 'GET',
      path: p.tagsPath,
      headers: p.getHeaders,
      signal,
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
    if (res.statusCode >= 300) {
      await res.body.dump();
      throw new Error(`model listing answered ${res.statusCode}`);
    }
    const body: unknown = await res.body.json();
    const models = isObject(body) ? body.models : undefined;
    if (!Array.isArray(models)) throw new Error('model listing has no models array');
    const names: string[] = [];
    for (const m of models) {
      if (!isObject(m)) continue;
      if (typeof m.name === 'string') names.push(m.name);
      if (typeof m.model === 'string' && m.model !== m.name) names.push(m.model);
    }
    return names;
  }

  private post(call: AdapterCall, stream: boolean) {
    const p = this.prepare(call.provider);
    // Translation may throw UnsupportedRequestError before any network call.
    const body = toOllamaRequest(call.body, call.target.model, call.provider, stream);
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
        chatPath: basePath + '/api/chat',
        tagsPath: basePath + '/api/tags',
        postHeaders: providerHeaders(provider, true),
        getHeaders: providerHeaders(provider, false),
      };
      this.prepared.set(provider, p);
    }
    return p;
  }
}
