/**
 * Load with faults: thousands of requests at concurrency ≥ 100 while the three
 * upstreams of the chain fail and recover at random (refuse, 5xx, 429, hang,
 * reset, cut streams, error events, malformed data). Every request must end
 * with a documented outcome within its bound, exactly once; the attempt counts
 * in the response headers, the log lines and the metrics must add up; RSS
 * stays bounded.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeBehavior, type FakeUpstream } from '@mana/llm-testkit';
import {
  PROVIDER_KEY_VARS,
  SIZES,
  chat,
  configYaml,
  finishSuite,
  requestLogs,
  sleep,
  startGateway,
  streamEnding,
  type GatewayProcess,
  type Response,
} from './harness.js';

const BOUND_MS = 12_000; // three hanging targets × (1 s timeout + ≤ 1 s timer slack), with room
const CHAOS_EVERY_MS = 50;
const RSS_LIMIT_MB = 300;

let gateway: GatewayProcess;
const fakes: FakeUpstream[] = [];
const NAMES = ['alpha', 'beta', 'gamma'];

const HEALTHY: FakeBehavior = { kind: 'answer', content: 'all good here', chunks: 3 };
/** Faults with their weights: the chaos loop picks one per tick for a random upstream. */
const CHAOS: { weight: number; apply: (fake: FakeUpstream) => Promise<void> | void }[] = [
  { weight: 30, apply: (f) => f.on('*', HEALTHY) },
  { weight: 10, apply: (f) => f.on('*', { kind: 'status', status: 500 }) },
  { weight: 8, apply: (f) => f.on('*', { kind: 'status', status: 429, headers: { 'retry-after': '1' } }) },
  { weight: 8, apply: (f) => f.stop() }, // refuse (and drop open connections)
  { weight: 3, apply: (f) => f.on('*', { kind: 'hang' }) },
  { weight: 6, apply: (f) => f.on('*', { kind: 'destroy' }) },
  { weight: 8, apply: (f) => f.on('*', { kind: 'answer', content: 'one two three four', chunks: 4, cutAfterChunks: 2 }) },
  { weight: 6, apply: (f) => f.on('*', { kind: 'answer', errorEventAfterChunks: 0 }) },
  { weight: 6, apply: (f) => f.on('*', { kind: 'malformed_json' }) },
  { weight: 5, apply: (f) => f.on('*', { kind: 'empty_stream' }) },
  { weight: 10, apply: (f) => f.on('*', { kind: 'answer', content: 'slow but fine', chunks: 4, chunkIntervalMs: 30 }) },
];
const CHAOS_TOTAL = CHAOS.reduce((n, c) => n + c.weight, 0);

async function heal(fake: FakeUpstream): Promise<void> {
  // restart() is for a stopped fake; on a listening one it is refused, which is fine.
  await fake.restart().catch(() => undefined);
  fake.on('*', HEALTHY);
}

beforeAll(async () => {
  for (const name of NAMES) {
    const fake = await startFakeOpenAI({ name, default: HEALTHY, record: false });
    fakes.push(fake);
  }
  gateway = await startGateway({
    config: configYaml({
      settings: {
        first_byte_timeout: '1s',
        connect_timeout: '500ms',
        failure_threshold: 2,
        unhealthy_period: '1s',
        rate_limit_cooldown: '200ms',
        probe_interval: '1s',
        probe_timeout: '500ms',
      },
      providers: Object.fromEntries(NAMES.map((name, i) => [name, { url: fakes[i]!.baseUrl, key: PROVIDER_KEY_VARS[i]! }])),
      aliases: {
        'mana/fast-text': NAMES.map((n) => `${n}/m`),
        'mana/long-form': NAMES.map((n) => `${n}/m`),
      },
      defaultChain: NAMES.map((n) => `${n}/m`),
    }).replace(
      // Round robin for one alias so every target takes first-hand traffic.
      '  mana/long-form:\n',
      '  mana/long-form:\n    strategy: round_robin\n',
    ),
  });
});

afterAll(() => finishSuite(gateway, fakes));

type Outcome = 'ok_json' | 'ok_stream_done' | 'ok_stream_error_event' | 'upstream_failed' | 'no_healthy_provider' | 'undocumented';

function classify(r: Response, stream: boolean): Outcome {
  if (r.status === 200) {
    const resolved = String(r.headers['x-mana-llm-resolved'] ?? '');
    if (!NAMES.some((n) => resolved === `${n}/m`)) return 'undocumented';
    if (!stream) {
      try {
        return (JSON.parse(r.body) as { object?: string }).object === 'chat.completion' ? 'ok_json' : 'undocumented';
      } catch {
        return 'undocumented';
      }
    }
    const ending = streamEnding(r);
    if (ending === 'done') return 'ok_stream_done';
    if (ending === 'error_event' && !r.body.includes('[DONE]')) return 'ok_stream_error_event';
    return 'undocumented';
  }
  let code: string | undefined;
  try {
    code = (JSON.parse(r.body) as { error?: { code?: string } }).error?.code;
  } catch {
    return 'undocumented';
  }
  if (r.status === 502 && code === 'upstream_failed') return 'upstream_failed';
  if (r.status === 503 && code === 'no_healthy_provider' && r.headers['retry-after'] !== undefined) return 'no_healthy_provider';
  return 'undocumented';
}

describe('load with faults', () => {
  it(`${SIZES.loadRequests} requests at concurrency ${SIZES.loadConcurrency} while upstreams fail and recover at random`, async () => {
    const before = await gateway.metrics();
    const agent = new http.Agent({ keepAlive: true, maxSockets: SIZES.loadConcurrency });
    const outcomes = new Map<Outcome, number>();
    const undocumented: string[] = [];
    const responses = new Map<string, { attempts: number; status: number }>();
    let answeredTwice = 0;
    let headerAttempts = 0;
    let multiAttempt = 0;
    let maxMs = 0;
    let maxRss = 0;

    // Chaos: bounded by the load's own end (and a hard deadline).
    let loadDone = false;
    let chaosTicks = 0;
    const chaosDeadline = Date.now() + 120_000;
    const chaos = (async () => {
      while (!loadDone && Date.now() < chaosDeadline) {
        const fake = fakes[Math.floor(Math.random() * fakes.length)]!;
        // Every fault once first (in order), then at random by weight.
        let pick = Math.random() * CHAOS_TOTAL;
        const choice = chaosTicks < CHAOS.length ? CHAOS[chaosTicks]! : (CHAOS.find((c) => (pick -= c.weight) < 0) ?? CHAOS[0]!);
        await fake.restart().catch(() => undefined);
        await choice.apply(fake);
        chaosTicks += 1;
        maxRss = Math.max(maxRss, gateway.rssMb());
        await sleep(CHAOS_EVERY_MS);
      }
      await Promise.all(fakes.map(heal));
    })();

    let next = 0;
    const worker = async () => {
      while (next < SIZES.loadRequests) {
        const i = next++;
        const id = `load-${i}`;
        const stream = i % 5 < 2;
        const model = i % 2 === 0 ? 'mana/fast-text' : 'mana/long-form';
        let r: Response;
        try {
          r = await chat(gateway.url, model, { stream, agent, requestId: id, timeoutMs: BOUND_MS });
        } catch (error) {
          outcomes.set('undocumented', (outcomes.get('undocumented') ?? 0) + 1);
          undocumented.push(`${id}: ${(error as Error).message}`);
          continue;
        }
        if (responses.has(id)) answeredTwice += 1;
        const attempts = Number(r.headers['x-mana-llm-attempts'] ?? 0);
        responses.set(id, { attempts, status: r.status });
        headerAttempts += attempts;
        if (attempts > 1) multiAttempt += 1;
        maxMs = Math.max(maxMs, r.ms);
        if (r.headers['x-request-id'] !== id) undocumented.push(`${id}: X-Request-Id ${r.headers['x-request-id']}`);
        const outcome = classify(r, stream);
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        if (outcome === 'undocumented') undocumented.push(`${id}: ${r.status} ${r.body.slice(-200)}`);
      }
    };
    await Promise.all(Array.from({ length: SIZES.loadConcurrency }, worker));
    loadDone = true;
    await chaos;
    agent.destroy();

    const summary = Object.fromEntries(outcomes);
    expect(undocumented.slice(0, 10), JSON.stringify(summary)).toEqual([]);
    expect(responses.size).toBe(SIZES.loadRequests);
    expect(answeredTwice).toBe(0);
    expect(maxMs).toBeLessThan(BOUND_MS);
    expect(maxRss).toBeLessThan(RSS_LIMIT_MB);
    // The chaos did happen: failovers, and both documented error kinds or mid-stream errors.
    expect(chaosTicks).toBeGreaterThan(CHAOS.length);
    expect(multiAttempt, JSON.stringify(summary)).toBeGreaterThan(0);

    // Exactly one log line per request, with the status the client got and the same number of upstream calls.
    let logs = requestLogs(gateway);
    for (let waited = 0; waited < 5_000 && [...responses.keys()].some((id) => !logs.has(id)); waited += 100) {
      await sleep(100);
      logs = requestLogs(gateway);
    }
    const logProblems: string[] = [];
    for (const [id, r] of responses) {
      const lines = logs.get(id) ?? [];
      if (lines.length !== 1) {
        logProblems.push(`${id}: ${lines.length} log lines`);
        continue;
      }
      const line = lines[0]!;
      if (line.status !== r.status) logProblems.push(`${id}: logged status ${String(line.status)}, client got ${r.status}`);
      const attempts = Array.isArray(line.attempts) ? (line.attempts as { outcome: string }[]) : [];
      const calls = attempts.filter((a) => a.outcome !== 'skipped').length;
      if (calls !== r.attempts) logProblems.push(`${id}: logged ${calls} upstream calls, header said ${r.attempts}`);
    }
    expect(logProblems.slice(0, 10), `${logProblems.length} log mismatches`).toEqual([]);

    // Metrics add up: one request count per request, one attempt count per upstream call.
    const after = await gateway.metrics();
    const delta = (name: string, match: Parameters<typeof after.sum>[1] = {}) => after.sum(name, match) - before.sum(name, match);
    expect(delta('mana_llm_requests_total')).toBe(SIZES.loadRequests);
    expect(delta('mana_llm_attempts_total', { outcome: (o) => o !== 'skipped' })).toBe(headerAttempts);
    expect(delta('mana_llm_fallback_total')).toBeGreaterThan(0);
    const statuses = (s: string) => delta('mana_llm_requests_total', { status: s });
    expect(statuses('200')).toBe((summary.ok_json ?? 0) + (summary.ok_stream_done ?? 0) + (summary.ok_stream_error_event ?? 0));
    expect(statuses('502')).toBe(summary.upstream_failed ?? 0);
    expect(statuses('503')).toBe(summary.no_healthy_provider ?? 0);
    expect(after.sum('mana_llm_in_flight_requests')).toBe(0);
  });

  it('serves normally once the upstreams are healthy again', async () => {
    await sleep(1_500); // unhealthy period (1 s) and a probe round
    const deadline = Date.now() + 10_000;
    let r = await chat(gateway.url, 'mana/fast-text');
    while (r.status !== 200 && Date.now() < deadline) {
      await sleep(250);
      r = await chat(gateway.url, 'mana/fast-text');
    }
    expect(r.status).toBe(200);
    expect(gateway.isAlive()).toBe(true);
  });
});
