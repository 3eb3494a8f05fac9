/**
 * Whether traces are exported, and how: read from OpenTelemetry's standard
 * environment variables, the ones every OTel SDK and the Collector's docs
 * name. Off unless an OTLP endpoint is set; pure (env in, a config or a
 * message out), so a bad value stops the start with a clear message instead
 * of exporting nowhere. Imports nothing of OpenTelemetry: with tracing off no
 * OTel module is loaded at all (start-tracing.ts loads them on demand).
 */
import { redactUrl } from '@mana/llm-router';

/** The OTLP encodings over HTTP this gateway exports; gRPC is not built in. */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** `OTEL_TRACES_SAMPLER` values (the specification's, less the Jaeger remote sampler). */
export const SAMPLERS = ['parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio', 'always_on', 'always_off', 'traceidratio'] as const;
export type SamplerName = (typeof SAMPLERS)[number];

export const DEFAULT_SERVICE_NAME = 'mana-llm-gateway';

export interface TracingConfig {
  /** Where spans are POSTed: the traces URL itself (`…/v1/traces`). */
  readonly endpoint: string;
  /** `OTEL_EXPORTER_OTLP_(TRACES_)HEADERS`: often a backend's API key, so never logged. */
  readonly headers: Readonly<Record<string, string>>;
  readonly protocol: OtlpProtocol;
  readonly serviceName: string;
  /** `OTEL_RESOURCE_ATTRIBUTES`, `service.name` aside. */
  readonly resourceAttributes: Readonly<Record<string, string>>;
  readonly sampler: SamplerName;
  /** `OTEL_TRACES_SAMPLER_ARG` of the ratio samplers: the share of new traces recorded, 0 … 1. */
  readonly ratio: number;
}

export type TracingConfigResult = { readonly ok: true; readonly config: TracingConfig | undefined } | { readonly ok: false; readonly message: string };

type Env = Record<string, string | undefined>;

function set(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** The tracing the environment asks for: undefined (off) unless an OTLP endpoint is set. */
export function tracingConfig(env: Env): TracingConfigResult {
  if (set(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return { ok: true, config: undefined };
  const exporter = set(env, 'OTEL_TRACES_EXPORTER')?.toLowerCase();
  if (exporter === 'none') return { ok: true, config: undefined };
  if (exporter !== undefined && exporter !== 'otlp') return refused(`OTEL_TRACES_EXPORTER "${exporter.slice(0, 50)}" is not supported: expected otlp or none.`);

  const endpoint = tracesEndpoint(env);
  if (endpoint === undefined) return { ok: true, config: undefined };
  if (!endpoint.ok) return endpoint;

  const protocol = (set(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? set(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf').toLowerCase();
  if (!(OTLP_PROTOCOLS as readonly string[]).includes(protocol)) {
    return refused(`OTEL_EXPORTER_OTLP_PROTOCOL "${protocol.slice(0, 50)}" is not supported: expected ${OTLP_PROTOCOLS.join(' or ')} (a Collector's OTLP/HTTP port, 4318).`);
  }
  const headers = keyValueList(env, ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS']);
  if (!headers.ok) return headers;
  const resource = keyValueList(env, ['OTEL_RESOURCE_ATTRIBUTES']);
  if (!resource.ok) return resource;
  const { 'service.name': resourceServiceName, ...resourceAttributes } = resource.values;

  const sampler = (set(env, 'OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on').toLowerCase();
  if (!(SAMPLERS as readonly string[]).includes(sampler)) return refused(`OTEL_TRACES_SAMPLER "${sampler.slice(0, 50)}" is not supported: expected one of ${SAMPLERS.join(', ')}.`);
  const ratioText = set(env, 'OTEL_TRACES_SAMPLER_ARG');
  const ratio = ratioText === undefined ? 1 : Number(ratioText);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) return refused(`OTEL_TRACES_SAMPLER_ARG "${ratioText!.slice(0, 50)}" is not a ratio from 0 to 1.`);

  return {
    ok: true,
    config: {
      endpoint: endpoint.url,
      headers: headers.values,
      protocol: protocol as OtlpProtocol,
      serviceName: set(env, 'OTEL_SERVICE_NAME') ?? resourceServiceName ?? DEFAULT_SERVICE_NAME,
      resourceAttributes,
      sampler: sampler as SamplerName,
      ratio,
    },
  };
}

/** How the start line shows the exporter: protocol and endpoint, its credentials and query values hidden. */
export function describeTracing(config: TracingConfig | undefined): string {
  if (config === undefined) return 'off';
  const sampling = config.sampler.endsWith('traceidratio') ? `${config.sampler} ${config.ratio}` : config.sampler;
  return `otlp ${config.protocol} → ${redactUrl(config.endpoint)} (${sampling})`;
}

function refused(message: string): TracingConfigResult & { ok: false } {
  return { ok: false, message };
}

/**
 * The traces URL: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as written, else
 * `OTEL_EXPORTER_OTLP_ENDPOINT` with `v1/traces` appended (the specification's rule).
 */
function tracesEndpoint(env: Env): { readonly ok: true; readonly url: string } | (TracingConfigResult & { ok: false }) | undefined {
  const own = set(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = set(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const name = own !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  const text = own ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`);
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Never quoted: an endpoint may carry a token.
    return refused(`${name} is not a URL: expected http(s)://host:port, e.g. http://localhost:4318.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return refused(`${name} must be an http(s) URL (OTLP over HTTP).`);
  return { ok: true, url: url.href };
}

/**
 * `key1=value1,key2=value2` with percent-encoded values (the W3C Baggage form
 * the specification uses for headers and resource attributes); later
 * variables in `names` win over earlier ones. An entry without `=` or with an
 * empty key is refused, its value never quoted.
 */
function keyValueList(env: Env, names: readonly string[]): { readonly ok: true; readonly values: Record<string, string> } | (TracingConfigResult & { ok: false }) {
  // No prototype: keys come from the environment (`__proto__=x` must stay a key).
  const values: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const name of names) {
    const text = set(env, name);
    if (text === undefined) continue;
    for (const entry of text.split(',')) {
      if (entry.trim() === '') continue;
      const eq = entry.indexOf('=');
      const key = eq === -1 ? '' : entry.slice(0, eq).trim();
      if (key === '') return refused(`${name} has an entry that is not key=value.`);
      try {
        values[key] = decodeURIComponent(entry.slice(eq + 1).trim());
      } catch {
        return refused(`${name}: the value of ${key.slice(0, 50)} is not valid percent-encoding.`);
      }
    }
  }
  return { ok: true, values };
}
