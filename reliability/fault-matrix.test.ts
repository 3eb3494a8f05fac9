/**
 * Fault matrix: every upstream fault of the testkit × both upstream dialects
 * (OpenAI-compatible SSE, Ollama NDJSON) × streaming and not × a one-target alias ("solo": the client sees the documented error) and a
 * two-target alias ("pair": the client sees the documented failover, or the
 * documented mid-stream error event once the first byte is out). Every request
 * has a time bound; hung upstream requests must be closed by the gateway; the
 * whole matrix runs more than once and the gateway's open handles and timers
 * must not grow from one pass to the next.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingPort, startFakeOllama, startFakeOpenAI, type FakeBehavior, type FakeUpstream } from '@mana/llm-testkit';
import {
  PROVIDER_KEY_VARS,
  SIZES,
  chat,
  configYaml,
  finishSuite,
  sleep,
  startGateway,
  streamEnding,
  type GatewayProcess,
  type Response,
} from './harness.js';

const FIRST_BYTE_TIMEOUT_MS = 1_000;
// undici runs the first-byte (headers) timeout on ~1 s "fast timers", so a 1 s
// timeout fires after 1–2 s. Every request must still end within this bound.
const BOUND_MS = 6_000;

type Mode = 'json' | 'stream';
type Chain = 'solo' | 'pair';
type Dialect = 'openai' | 'ollama';
const DIALECTS: Dialect[] = ['openai', 'ollama'];

interface Expectation {
  status: number | readonly number[];
  /** Who answered: the faulty target itself or the backup. */
  resolved?: 'faulty' | 'backup';
  /** For 200 streams. */
  ending?: 'done' | 'error_event';
  /** Reason of the faulty target's attempt in an error body (502). */
  reasons?: readonly string[];
  /** Accepted X-Mana-LLM-Attempts values. */
  attempts?: readonly number[];
  minMs?: number;
}

interface Fault {
  name: string;
  behavior: FakeBehavior | 'refuse';
  expect(mode: Mode, chain: Chain): Expectation;
}

const failover = (reasons: readonly string[]) => (_mode: Mode, chain: Chain): Expectation =>
  chain === 'solo' ? { status: 502, reasons, attempts: [1] } : { status: 200, resolved: 'backup', ending: 'done', attempts: [2] };

/** The faulty target itself answers 200 (a JSON request reads the whole answer); a stream ends with `ending`. */
const answered = (ending: 'done' | 'error_event', stream: Pick<Expectation, 'minMs'> = {}) => (mode: Mode): Expectation =>
  mode === 'json'
    ? { status: 200, resolved: 'faulty', attempts: [1] }
    : { status: 200, resolved: 'faulty', ending, attempts: [1], ...stream };

const FAULTS: Fault[] = [
  { name: 'refuse', behavior: 'refuse', expect: failover(['connect_refused']) },
  { name: 'hang', behavior: { kind: 'hang' }, expect: failover(['first_byte_timeout']) },
  {
    name: 'slow-headers',
    behavior: { kind: 'answer', headerDelayMs: 300 },
    expect: () => ({ status: 200, resolved: 'faulty', ending: 'done', attempts: [1], minMs: 280 }),
  },
  { name: 'http-5xx', behavior: { kind: 'status', status: 503 }, expect: failover(['http_503']) },
  {
    name: 'http-429',
    behavior: { kind: 'status', status: 429, headers: { 'retry-after': '1' } },
    // A 429 cools the target down for Retry-After (1 s): a request inside that
    // second skips it — 503 no_healthy_provider alone, the backup in a pair.
    expect: (_mode, chain) =>
      chain === 'solo'
        ? { status: [502, 503], reasons: ['http_429', 'cooling_down'], attempts: [0, 1] }
        : { status: 200, resolved: 'backup', ending: 'done', attempts: [1, 2] },
  },
  { name: 'malformed-json', behavior: { kind: 'malformed_json' }, expect: failover(['invalid_response']) },
  {
    name: 'error-before-first-delta',
    behavior: { kind: 'answer', errorEventAfterChunks: 0 },
    expect: (mode, chain) => (mode === 'json' ? answered('done')(mode) : failover(['stream_error'])(mode, chain)),
  },
  {
    name: 'empty-stream',
    behavior: { kind: 'empty_stream' },
    expect: (mode, chain) => failover([mode === 'json' ? 'empty_response' : 'empty_stream'])(mode, chain),
  },
  {
    name: 'cut-after-chunks',
    behavior: { kind: 'answer', content: 'one two three four', chunks: 4, cutAfterChunks: 2 },
    // After the first delta the target cannot change: an explicit error event, never [DONE].
    expect: answered('error_event'),
  },
  {
    name: 'error-after-first-delta',
    behavior: { kind: 'answer', content: 'one two three four', chunks: 4, errorEventAfterChunks: 2 },
    expect: answered('error_event'),
  },
  {
    name: 'slow-trickle',
    behavior: { kind: 'answer', content: 'a b c d e', chunks: 5, chunkIntervalMs: 150 },
    expect: answered('done', { minMs: 500 }),
  },
  {
    name: 'trickle-past-timeout',
    // Silence inside a committed stream longer than stream_idle_timeout (set to the first-byte timeout below).
    behavior: { kind: 'answer', content: 'a b c', chunks: 3, chunkIntervalMs: 3_500 },
    expect: answered('error_event'),
  },
  {
    name: 'destroy',
    behavior: { kind: 'destroy' },
    expect: failover(['socket_closed', 'connect_reset']),
  },
];

const MODES: Mode[] = ['json', 'stream'];
const CHAINS: Chain[] = ['solo', 'pair'];

let gateway: GatewayProcess;
let backup: FakeUpstream;
/** Fakes by provider name (`<fault>` for OpenAI, `ollama-<fault>` for Ollama). */
const fakes = new Map<string, FakeUpstream>();

function providerOf(fault: Fault, dialect: Dialect): string {
  return dialect === 'openai' ? fault.name : `ollama-${fault.name}`;
}

function aliasOf(fault: Fault, mode: Mode, chain: Chain, dialect: Dialect = 'openai'): string {
  return `mana/fault-${providerOf(fault, dialect)}-${chain}-${mode}`;
}

beforeAll(async () => {
  backup = await startFakeOpenAI({ name: 'backup' });
  const providers: Parameters<typeof configYaml>[0]['providers'] = {
    backup: { url: backup.baseUrl, key: PROVIDER_KEY_VARS[0] },
  };
  const aliases: Record<string, string[]> = {};
  for (const [i, fault] of FAULTS.entries()) {
    for (const dialect of DIALECTS) {
      const name = providerOf(fault, dialect);
      let url: string;
      if (fault.behavior === 'refuse') {
        url = `http://127.0.0.1:${await refusingPort()}${dialect === 'openai' ? '/v1' : ''}`;
      } else {
        const start = dialect === 'openai' ? startFakeOpenAI : startFakeOllama;
        // Ollama targets are checked against /api/tags: list every model the aliases use.
        const models = CHAINS.flatMap((chain) => MODES.map((mode) => `${chain}-${mode}`));
        const fake = await start({ name, default: fault.behavior, models });
        fakes.set(name, fake);
        url = fake.baseUrl;
      }
      providers[name] =
        dialect === 'openai'
          ? { url, key: PROVIDER_KEY_VARS[i % PROVIDER_KEY_VARS.length]! }
          : // Ollama's built-in first-byte timeout is 300 s: the matrix uses 1 s everywhere.
            { url, type: 'ollama', settings: { first_byte_timeout: `${FIRST_BYTE_TIMEOUT_MS}ms` } };
      for (const mode of MODES) {
        for (const chain of CHAINS) {
          const target = `${name}/${chain}-${mode}`;
          aliases[aliasOf(fault, mode, chain, dialect)] = chain === 'solo' ? [target] : [target, `backup/${mode}`];
        }
      }
    }
  }
  gateway = await startGateway({
    config: configYaml({
      settings: {
        first_byte_timeout: `${FIRST_BYTE_TIMEOUT_MS}ms`,
        // Its default (30 s) is longer than a pass may take: the trickle fault must end within it.
        stream_idle_timeout: `${FIRST_BYTE_TIMEOUT_MS}ms`,
        connect_timeout: '1s',
        // Keep breakers closed so every pass sees the same first-request outcome.
        failure_threshold: 1_000_000,
        rate_limit_cooldown: '1ms',
        probe_interval: '10m',
      },
      providers,
      aliases,
      defaultChain: ['backup/default'],
    }),
  });
});

afterAll(() => finishSuite(gateway, [backup, ...fakes.values()]));

interface CaseResult {
  fault: Fault;
  dialect: Dialect;
  mode: Mode;
  chain: Chain;
  response?: Response;
  error?: Error;
}

async function runPass(): Promise<CaseResult[]> {
  const cases: Promise<CaseResult>[] = [];
  for (const fault of FAULTS) {
    for (const dialect of DIALECTS) {
      for (const mode of MODES) {
        for (const chain of CHAINS) {
          cases.push(
            chat(gateway.url, aliasOf(fault, mode, chain, dialect), { stream: mode === 'stream', timeoutMs: BOUND_MS }).then(
              (response) => ({ fault, dialect, mode, chain, response }),
              (error: Error) => ({ fault, dialect, mode, chain, error }),
            ),
          );
        }
      }
    }
  }
  return Promise.all(cases);
}

function check(result: CaseResult): string[] {
  const problems: string[] = [];
  const label = `${result.dialect} ${result.fault.name} ${result.mode} ${result.chain}`;
  if (result.error) return [`${label}: ${result.error.message}`];
  const r = result.response!;
  const want = result.fault.expect(result.mode, result.chain);
  const statuses = Array.isArray(want.status) ? want.status : [want.status];
  if (!statuses.includes(r.status)) problems.push(`${label}: status ${r.status}, want ${statuses.join('|')}: ${r.body.slice(0, 300)}`);
  if (r.ms > BOUND_MS) problems.push(`${label}: took ${r.ms.toFixed(0)} ms`);
  if (want.minMs !== undefined && r.ms < want.minMs) problems.push(`${label}: took only ${r.ms.toFixed(0)} ms`);
  const attempts = Number(r.headers['x-mana-llm-attempts']);
  if (want.attempts && !want.attempts.includes(attempts)) {
    problems.push(`${label}: X-Mana-LLM-Attempts ${r.headers['x-mana-llm-attempts']}, want ${want.attempts.join('|')}`);
  }
  if (r.status === 200) {
    const resolved = String(r.headers['x-mana-llm-resolved'] ?? '');
    const wantProvider = want.resolved === 'backup' ? 'backup/' : `${providerOf(result.fault, result.dialect)}/`;
    if (!resolved.startsWith(wantProvider)) problems.push(`${label}: resolved ${resolved}, want ${wantProvider}…`);
    if (result.mode === 'stream') {
      const ending = streamEnding(r);
      if (ending !== (want.ending ?? 'done')) problems.push(`${label}: stream ended with ${ending}, want ${want.ending}`);
      if (ending === 'error_event' && r.body.includes('[DONE]')) problems.push(`${label}: error event and [DONE]`);
    } else {
      const body = JSON.parse(r.body) as { object?: string };
      if (body.object !== 'chat.completion') problems.push(`${label}: body is not a chat.completion`);
    }
  } else {
    let body: { error?: { code?: string; attempts?: { target: string; reason: string }[] } };
    try {
      body = JSON.parse(r.body);
    } catch {
      return [...problems, `${label}: error body is not JSON: ${r.body.slice(0, 200)}`];
    }
    const code = body.error?.code;
    const wantCode = r.status === 502 ? 'upstream_failed' : r.status === 503 ? 'no_healthy_provider' : undefined;
    if (code !== wantCode) problems.push(`${label}: code ${code}, want ${wantCode}`);
    const reason = body.error?.attempts?.[0]?.reason;
    if (want.reasons && !want.reasons.some((w) => reason?.startsWith(w))) {
      problems.push(`${label}: first attempt reason ${reason}, want ${want.reasons.join('|')}`);
    }
    if (r.status === 503 && r.headers['retry-after'] === undefined) problems.push(`${label}: 503 without Retry-After`);
  }
  return problems;
}

interface HandleCounts {
  /** Every open file descriptor (sockets included, ref'd or not). */
  fds: number;
  /** libuv handles and resources keeping the event loop alive (ref'd sockets, timers, immediates…). */
  handles: number;
  resources: number;
  timeouts: number;
  inFlight: number;
}

async function handleCounts(): Promise<HandleCounts> {
  const m = await gateway.metrics();
  return {
    fds: m.sum('process_open_fds'),
    handles: m.sum('nodejs_active_handles'),
    resources: m.sum('nodejs_active_resources'),
    timeouts: m.sum('nodejs_active_resources', { type: 'Timeout' }),
    inFlight: m.sum('mana_llm_in_flight_requests'),
  };
}

/** Waits for the gateway to be idle: nothing in flight, every hung upstream request closed. */
async function settle(): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { inFlight } = await handleCounts();
    const hangs = [fakes.get('hang')!, fakes.get('ollama-hang')!];
    const openHangs = hangs.reduce((n, h) => n + h.requests.filter((r) => !r.closedByClient).length, 0);
    if (inFlight === 0 && openHangs === 0) return;
    if (Date.now() > deadline) throw new Error(`not idle after 10 s: in flight ${inFlight}, hung upstream requests open ${openHangs}`);
    await sleep(100);
  }
}

describe('fault matrix', () => {
  it(`every fault × OpenAI/Ollama × stream/json × solo/pair ends with its documented outcome, within ${BOUND_MS} ms, ${SIZES.matrixPasses} passes without leaks`, async () => {
    // Before any chat request: the fds of a fresh gateway (listening socket, log pipes…).
    const fresh = await handleCounts();
    const counts: HandleCounts[] = [];
    for (let pass = 0; pass < SIZES.matrixPasses; pass += 1) {
      const results = await runPass();
      const problems = results.flatMap(check);
      expect(problems, `pass ${pass + 1}`).toEqual([]);
      await settle();
      // Idle keep-alive sockets to the fakes are legitimately pooled; what must
      // not happen is growth from one identical pass to the next.
      counts.push(await handleCounts());
    }
    const first = counts[0]!;
    const last = counts.at(-1)!;
    const trail = (key: keyof HandleCounts) => `${key} per pass: ${counts.map((c) => c[key]).join(' → ')}`;
    expect(last.handles, trail('handles')).toBeLessThanOrEqual(first.handles + 4);
    expect(last.resources, trail('resources')).toBeLessThanOrEqual(first.resources + 4);
    expect(last.timeouts, trail('timeouts')).toBeLessThanOrEqual(first.timeouts + 2);
    // Dropping every upstream connection (the fakes restart) must bring the
    // gateway back to the descriptors of a fresh process: pooled keep-alive
    // sockets are the only extra ones it may hold, and nothing is orphaned.
    for (const fake of [backup, ...fakes.values()]) {
      await fake.stop();
      await fake.restart();
    }
    const deadline = Date.now() + 5_000;
    let idle = await handleCounts();
    while (idle.fds > fresh.fds + 1 && Date.now() < deadline) {
      await sleep(100);
      idle = await handleCounts();
    }
    expect(idle.fds, `${trail('fds')}; fresh ${fresh.fds}, with upstreams dropped ${idle.fds}`).toBeLessThanOrEqual(fresh.fds + 1);
    // The hung upstream requests were all closed by the gateway (not left open).
    for (const hang of [fakes.get('hang')!, fakes.get('ollama-hang')!]) {
      expect(hang.requests.length).toBe(4 * SIZES.matrixPasses);
      expect(hang.requests.every((r) => r.closedByClient)).toBe(true);
    }
  });

  it('a 429 with Retry-After cools the target down: the next request answers 503 no_healthy_provider with Retry-After', async () => {
    const fault = FAULTS.find((f) => f.name === 'http-429')!;
    await sleep(1_100); // let any earlier cooldown pass
    const first = await chat(gateway.url, aliasOf(fault, 'json', 'solo'), { timeoutMs: BOUND_MS });
    expect(first.status).toBe(502);
    const second = await chat(gateway.url, aliasOf(fault, 'json', 'solo'), { timeoutMs: BOUND_MS });
    expect(second.status).toBe(503);
    expect(JSON.parse(second.body).error.code).toBe('no_healthy_provider');
    expect(Number(second.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(second.headers['x-mana-llm-attempts']).toBe('0');
  });

  it('the gateway is still serving after the matrix', async () => {
    const r = await chat(gateway.url, 'mana/fast-text');
    expect(r.status).toBe(200);
    expect(gateway.isAlive()).toBe(true);
  });
});
