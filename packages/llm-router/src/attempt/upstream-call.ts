import type { ProviderConfig, TargetConfig, UpstreamCall } from '../types.js';

interface Server {
  readonly address: string;
  readonly port: number;
}

/** Host and port of each provider object's base URL, worked out once (snapshots are immutable). */
const servers = new WeakMap<ProviderConfig, Server>();

/** The upstream call a request's observer is told of (AttemptObserver.callStarted). */
export function upstreamCall(target: TargetConfig, provider: ProviderConfig): UpstreamCall {
  const server = serverOf(provider);
  return {
    target: target.id,
    provider: target.provider,
    providerType: provider.type,
    model: target.model,
    serverAddress: server.address,
    serverPort: server.port,
  };
}

/** Only the host and port: the rest of a base URL (its query) may carry a secret. */
function serverOf(provider: ProviderConfig): Server {
  let server = servers.get(provider);
  if (server === undefined) {
    const url = new URL(provider.baseUrl);
    server = {
      // An IPv6 host without its brackets, as `server.address` names it.
      address: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
    };
    servers.set(provider, server);
  }
  return server;
}
