/**
 * How the built gateway exports its traces, and what it never does: block a
 * request on the collector. Each case starts a gateway as a user does, with
 * OTEL_* variables only (OTEL_BSP_* and OTEL_EXPORTER_OTLP_TIMEOUT are the
 * SDK's standard knobs, used here to make batches small and failures quick),
 * against a real OTLP/HTTP receiver on loopback told to accept, refuse (500,
 * 413) or hold its answer (a slow collector), or against a port nothing
 * listens on (a collector that is down). With tracing off, which modules the
 * process loaded is read through Node's own module hooks (module-loads.mjs,
 * preloaded with NODE_OPTIONS).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { refusingPort, startFakeOpenAI, startOtlpReceiver, waitUntil, type FakeUpstream, type OtlpReceiver } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess } from './harness.js';
import { metric } from './usage-client.js';

const MODULE_LOADS = fileURLToPath(new URL('./module-loads.mjs', import.meta.url));
const COLLECTOR_KEY = 'otlp-collector-key-e2e-7f3a';
const DROPPED = 'mana_llm_trace_spans_dropped_total';

let cloud: FakeUpstream;
let config: string;
let dir: string;
const receivers: OtlpReceiver[] = [];
let gw: GatewayProcess | undefined;

beforeAll(async () => {
  cloud = await startFakeOpenAI();
  config = `providers:\n  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false }\n` + aliasesYaml({}, ['cloud/m1']);
  dir = mkdtempSync(join(tmpdir(), 'mana-tracing-e2e-'));
});

afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

afterAll(async () => {
  await Promise.all([cloud?.close(), ...receivers.map((r) => r.close())]);
  rmSync(dir, { recursive: true, force: true });
});

async function receiver(): Promise<OtlpReceiver> {
  const started = await startOtlpReceiver();
  receivers.push(started);
  return started;
}

/** `count` chat completions one after the other through the OpenAI SDK: each one's status and how long it took. */
async function chats(target: GatewayProcess, count: number): Promise<{ status: number; ms: number }[]> {
  const client = new OpenAI({ baseURL: `${target.url}/v1`, apiKey: 'auth-off', maxRetries: 0 });
  const results: { status: number; ms: number }[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const { response } = await client.chat.completions.create({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    results.push({ status: response.status, ms: performance.now() - started });
  }
  return results;
}

/** Module URLs the process resolved (one per line in its MODULE_LOAD_LOG file), as package paths. */
function loadedOpenTelemetry(log: string): string[] {
  return [...new Set(readFileSync(log, 'utf8').split('\n').filter((url) => url.includes('/@opentelemetry/')).map((url) => url.slice(url.lastIndexOf('/@opentelemetry/') + 1)))];
}

const exportFailedLines = (target: GatewayProcess) => target.logs.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('trace export failed'));

describe('tracing off (no OTLP endpoint set, the default)', () => {
  it('loads not one OpenTelemetry module, and says so at start', async () => {
    const log = join(dir, 'off-modules.txt');
    gw = await spawnGateway({ config, env: { NODE_OPTIONS: `--import=${MODULE_LOADS}`, MODULE_LOAD_LOG: log } });
    expect((await gw.waitForLog((l) => l.msg === 'listening')).tracing).toBe('off');
    expect((await chats(gw, 3)).map((r) => r.status)).toEqual([200, 200, 200]);
    const line = await gw.waitForLog((l) => l.msg === 'request');
    expect(line.trace_id).toBeUndefined();
    // The hooks saw the gateway's own modules load (the file is no empty promise)…
    expect(readFileSync(log, 'utf8')).toContain('/apps/llm-gateway/dist/pipeline/routed-pipeline.js');
    // …and no OpenTelemetry package among them.
    expect(loadedOpenTelemetry(log)).toEqual([]);
    expect(await metric(gw, DROPPED)).toBe(0);
  });
});

describe('export over http/json', () => {
  it('sends JSON with OTEL_EXPORTER_OTLP_HEADERS, loads that exporter only, and never shows the header\'s value', async () => {
    const collector = await receiver();
    const log = join(dir, 'json-modules.txt');
    gw = await spawnGateway({
      config,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_HEADERS: `x-collector-key=${COLLECTOR_KEY}`,
        OTEL_SERVICE_NAME: 'gw-json',
        OTEL_BSP_SCHEDULE_DELAY: '50',
        NODE_OPTIONS: `--import=${MODULE_LOADS}`,
        MODULE_LOAD_LOG: log,
      },
    });
    expect((await gw.waitForLog((l) => l.msg === 'listening')).tracing).toBe(`otlp http/json → ${collector.url}/v1/traces (parentbased_always_on)`);
    await chats(gw, 1);
    const spans = await collector.waitForSpans((all) => all.some((s) => s.kind === 'server'));
    expect(spans.map((s) => s.kind).sort()).toEqual(['client', 'server']);
    expect(spans[0]!.resource['service.name']).toBe('gw-json');
    expect(collector.exports.every((e) => e.encoding === 'json' && e.headers['x-collector-key'] === COLLECTOR_KEY)).toBe(true);
    const loaded = loadedOpenTelemetry(log);
    expect(loaded).toContain('@opentelemetry/exporter-trace-otlp-http/build/src/index.js');
    expect(loaded.filter((m) => m.includes('exporter-trace-otlp-proto'))).toEqual([]);
    expect(gw.output()).not.toContain(COLLECTOR_KEY);
  });
});

describe('SIGTERM', () => {
  it('exports the spans still queued before the process exits', async () => {
    const collector = await receiver();
    // A batch delay of ten minutes: without the shutdown's flush nothing would be sent.
    gw = await spawnGateway({ config, env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '600000' } });
    await chats(gw, 2);
    await gw.waitForLog((l) => l.msg === 'request');
    expect(collector.spans).toHaveLength(0);
    gw.signal('SIGTERM');
    expect(await gw.waitForExit()).toEqual({ code: 0, signal: null });
    expect(collector.spans.filter((s) => s.kind === 'server')).toHaveLength(2);
    expect(collector.spans.filter((s) => s.kind === 'client')).toHaveLength(2);
  });
});

/** Small batches and a short export timeout: failures come quickly, and the queue (16 spans) fills. */
const FAULT_ENV = { OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_BSP_MAX_QUEUE_SIZE: '16', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4', OTEL_EXPORTER_OTLP_HEADERS: `x-collector-key=${COLLECTOR_KEY}` };

// Each case starts a gateway and waits out export failures: generous bounds on a busy machine.
describe('a collector that fails never reaches the requests: they answer, the spans are dropped and counted, failures logged once', { timeout: 60_000 }, () => {
  it.each([500, 413])('answering %i', async (status) => {
    const collector = await receiver();
    collector.respond({ kind: 'status', status });
    gw = await spawnGateway({ config, env: { ...FAULT_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_TIMEOUT: '2000' } });
    const results = await chats(gw, 6);
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(200));
    // Every span the collector refused is counted as dropped (12: a SERVER and a CLIENT span per request).
    await waitUntil('every refused span counted', async () => collector.spans.length === 12 && (await metric(gw!, DROPPED)) === 12, 20_000);
    expect(collector.exports.length).toBeGreaterThanOrEqual(3);
    // Several failed exports, one log line (at most one a minute), without the collector's key.
    const lines = exportFailedLines(gw);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'warn', spans_dropped: expect.any(Number) });
    expect(JSON.stringify(lines[0])).not.toContain(COLLECTOR_KEY);
  });

  it('down (nothing listens on its port)', async () => {
    gw = await spawnGateway({ config, env: { ...FAULT_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await refusingPort()}`, OTEL_EXPORTER_OTLP_TIMEOUT: '1000' } });
    const results = await chats(gw, 20);
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    await waitUntil('spans counted as dropped', async () => ((await metric(gw!, DROPPED)) ?? 0) > 0, 20_000);
    await gw.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('trace export failed'), 20_000);
    expect(exportFailedLines(gw)).toHaveLength(1);
  });

  it('slow (holding each export 10 s): requests finish while it holds one, and the bounded queue drops the rest', async () => {
    const collector = await receiver();
    collector.respond({ kind: 'delay', ms: 10_000 });
    gw = await spawnGateway({ config, env: { ...FAULT_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url } });
    await chats(gw, 1);
    // The collector now holds an export: the exporter waits for it (up to its 10 s timeout).
    await waitUntil('an export held by the collector', async () => collector.exports.length >= 1, 20_000);
    const heldSince = performance.now();
    const results = await chats(gw, 30);
    const elapsed = performance.now() - heldSince;
    expect(results.map((r) => r.status)).toEqual(Array(30).fill(200));
    // Had a request waited for the export, none could have finished before the collector let go of it.
    expect(elapsed).toBeLessThan(10_000);
    // 60 spans against a queue of 16 behind one held export: the rest dropped, memory bounded (counted on the
    // export thread, so the metric has them within a moment).
    await waitUntil('the spans the full queue could not take counted as dropped', async () => ((await metric(gw!, DROPPED)) ?? 0) >= 60 - 16 - 4, 5_000);
  });
});
