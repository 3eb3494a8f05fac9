import { describe, expect, it } from 'vitest';
import { describeTracing, tracingConfig, type TracingConfig } from './tracing-config.js';

/** The config of an environment that switches tracing on (fails the test otherwise). */
function on(env: Record<string, string>): TracingConfig {
  const result = tracingConfig(env);
  if (!result.ok) throw new Error(result.message);
  if (result.config === undefined) throw new Error('tracing is off');
  return result.config;
}

function refusal(env: Record<string, string>): string {
  const result = tracingConfig(env);
  if (result.ok) throw new Error('accepted');
  return result.message;
}

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };

describe('tracing from the OTEL_* environment', () => {
  it('is off without an endpoint, and off with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none whatever else is set', () => {
    expect(tracingConfig({})).toEqual({ ok: true, config: undefined });
    expect(tracingConfig({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' })).toEqual({ ok: true, config: undefined });
    expect(tracingConfig({ ...ENDPOINT, OTEL_SDK_DISABLED: 'TRUE' })).toEqual({ ok: true, config: undefined });
    expect(tracingConfig({ ...ENDPOINT, OTEL_TRACES_EXPORTER: 'none' })).toEqual({ ok: true, config: undefined });
    expect(on({ ...ENDPOINT, OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp' }).endpoint).toBe('http://collector:4318/v1/traces');
  });

  it('sends to <OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces, or to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as written', () => {
    expect(on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com:4318/' }).endpoint).toBe('https://otel.example.com:4318/v1/traces');
    expect(on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/base' }).endpoint).toBe('http://c:4318/base/v1/traces');
    expect(on({ ...ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://other:9999/custom' }).endpoint).toBe('http://other:9999/custom');
  });

  it('exports http/protobuf unless http/json is asked for; gRPC and other values stop the start, naming the variable', () => {
    expect(on(ENDPOINT).protocol).toBe('http/protobuf');
    expect(on({ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).protocol).toBe('http/json');
    expect(on({ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }).protocol).toBe('http/protobuf');
    expect(refusal({ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toMatch(/OTEL_EXPORTER_OTLP_PROTOCOL "grpc" is not supported: expected http\/protobuf or http\/json/);
    expect(refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318' })).toMatch(/OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL|is not a URL/);
    expect(refusal({ ...ENDPOINT, OTEL_TRACES_EXPORTER: 'zipkin' })).toMatch(/OTEL_TRACES_EXPORTER "zipkin" is not supported/);
  });

  it('reads headers as key=value pairs, percent-decoded, the traces variable over the general one; a bad entry is refused without its value', () => {
    const config = on({ ...ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc%3D%3D, x-team=core', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-team=traces' });
    expect({ ...config.headers }).toEqual({ 'x-api-key': 'abc==', 'x-team': 'traces' });
    const message = refusal({ ...ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS: 'secret-token-value' });
    expect(message).toMatch(/OTEL_EXPORTER_OTLP_HEADERS has an entry that is not key=value/);
    expect(message).not.toContain('secret-token-value');
  });

  it('names the service mana-llm-gateway unless OTEL_SERVICE_NAME or a service.name resource attribute says otherwise', () => {
    expect(on(ENDPOINT).serviceName).toBe('mana-llm-gateway');
    const fromResource = on({ ...ENDPOINT, OTEL_RESOURCE_ATTRIBUTES: 'service.name=edge-gw,deployment.environment.name=prod' });
    expect(fromResource.serviceName).toBe('edge-gw');
    expect({ ...fromResource.resourceAttributes }).toEqual({ 'deployment.environment.name': 'prod' });
    expect(on({ ...ENDPOINT, OTEL_SERVICE_NAME: 'gw-eu', OTEL_RESOURCE_ATTRIBUTES: 'service.name=edge-gw' }).serviceName).toBe('gw-eu');
  });

  it('samples parent-based, always on by default; a ratio from OTEL_TRACES_SAMPLER_ARG; bad values stop the start', () => {
    expect(on(ENDPOINT)).toMatchObject({ sampler: 'parentbased_always_on', ratio: 1 });
    expect(on({ ...ENDPOINT, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })).toMatchObject({ sampler: 'parentbased_traceidratio', ratio: 0.25 });
    expect(refusal({ ...ENDPOINT, OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toMatch(/OTEL_TRACES_SAMPLER "jaeger_remote" is not supported/);
    expect(refusal({ ...ENDPOINT, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' })).toMatch(/OTEL_TRACES_SAMPLER_ARG "1.5" is not a ratio from 0 to 1/);
  });

  it('shows protocol, endpoint and sampler on the start line, without credentials or query values', () => {
    expect(describeTracing(undefined)).toBe('off');
    const config = on({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://user:pw@otel.example.com/v1/traces?token=s3cret', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' });
    const shown = describeTracing(config);
    expect(shown).toBe('otlp http/protobuf → https://<redacted>@otel.example.com/v1/traces?token=<redacted> (traceidratio 0.1)');
    expect(shown).not.toMatch(/pw|s3cret/);
  });
});
