// `pnpm bench`: our gateway side by side with direct calls and with
// @portkey-ai/gateway 1.15.2, all against the same fast loopback fake upstream,
// in one run. Prints a table and writes bench/results/latest.{json,md}.
//
//   node bench/run.mjs [--quick] [--no-build] [--skip=portkey,ours,messages,responses,usage,tracing,keys,noise,shared,dashboard,floor,latency,throughput,failover,memory,saturation]
//                      [--out=DIR] [--log-level=info] [--no-auth] [--baseline=CHECKOUT] [--max-load-rounds=N]
//   node bench/run.mjs --only=saturation [--quick] [--saturation-seconds=N] [--no-build] [--skip=portkey]
//
// --baseline: another checkout of this repository, built (e.g. the commit before a change): its gateway
// (`CHECKOUT/apps/llm-gateway/dist/main.js`) runs as `ours_before`, and the notes give this build against it,
// in the same run: latency in paired blocks of their own, max throughput and CPU per request over alternating rounds.
// --max-load-rounds: how many alternating max-throughput rounds a pair (baseline, usage on/off) takes (default 4,
// 1 with --quick). Runs of one gateway vary by ±10 % here, its CPU per request by ±15 µs: for a bound of a few µs,
// read the paired rows' CPU figure or bench/cpu-ab.mjs.
//
// --log-level and --no-auth change how our gateway runs (default: request logs
// at info, client API keys on, as in production) for A/B experiments; results
// of such runs say so in their notes.
//
// Sections: latency (sequential, interleaved rounds; chat and embeddings; `messages` adds Anthropic's
// /v1/messages and `responses` OpenAI's /v1/responses on our gateway, the same prompt and upstream as its
// chat completions: lib/chat-apis.mjs), throughput (separate
// load process), failover cost, memory with 1,000 open streams. `shared` adds our gateway with
// MANA_LLM_DATABASE_URL (a throwaway PostgreSQL) to the latency rounds: what shared mode costs a request;
// `dashboard` adds it with the operator dashboard open and polling in a headless Chromium.
// Paired rows, each two targets alone in long blocks of their own (PAIRED_SIZES), for bounds finer than the
// shared rounds resolve: `keys` (1,000 service keys vs the static key), `tracing` (OpenTelemetry traces on,
// OTLP/HTTP protobuf to a local receiver, every trace sampled, vs off), `--baseline` (this build vs the one
// before) and `noise` (two gateways of this build with the same settings: what the method reads for nothing).
// `saturation` (lib/saturation.mjs) runs last, on upstreams of its own: a saturated local GPU box first in a
// chain with a cloud target behind it, under open-loop load; it writes bench/results/saturation.{json,md}.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { OTHER_APIS } from './lib/chat-apis.mjs';
import { createClient } from './lib/http-client.mjs';
import { runLoad } from './lib/run-load.mjs';
import { counterValue, usageEventsDropped } from './lib/gateway-metrics.mjs';
import { addedLatency, describePaired, interleavedRounds, pairedAddedLatency } from './lib/latency.mjs';
import { pairedCpuPerRequest } from './lib/cpu-per-request.mjs';
import { dashboardUnavailable, openDashboard } from './lib/dashboard.mjs';
import { failoverCost } from './lib/failover.mjs';
import { FIRST_BYTE_TIMEOUT_MS, UPSTREAM_KEY, gatewayConfig } from './lib/gateway-config.mjs';
import { memoryUnderStreams } from './lib/memory.mjs';
import { SERVICE_KEYS, createServiceKeys } from './lib/service-keys.mjs';
import { median } from './lib/stats.mjs';
import { cpuMs, gatewayMain, repoRoot, startCollector, startFloorProxy, startManaGateway, startPortkey, startUpstream, waitFor } from './lib/procs.mjs';
import { renderMarkdown, renderTerminal, evaluateTargets } from './lib/report.mjs';
import { SATURATION_CONFIGS, runSaturation } from './lib/saturation.mjs';
import { renderSaturationMarkdown } from './lib/saturation-report.mjs';
import { flag, option } from './lib/options.mjs';

const quick = flag('quick');
const skip = new Set(option('skip', '').split(',').filter(Boolean));
const only = option('only', undefined);
if (only !== undefined && only !== 'saturation') throw new Error(`--only=${only}: only --only=saturation exists`);
const outDir = path.resolve(option('out', fileURLToPath(new URL('./results/', import.meta.url))));
const baselineCheckout = option('baseline', undefined);
const baselineMain = baselineCheckout === undefined ? undefined : path.resolve(baselineCheckout, 'apps/llm-gateway/dist/main.js');

// Sizes: the whole run stays within ~6 minutes on 2 cores.
const SIZES = quick
  ? { warmup: 100, rounds: 6, perRound: 20, loadS: 3, rate: 300, steady: 30, streams: 200, usagePairs: 1 }
  : { warmup: 500, rounds: 30, perRound: 40, loadS: 8, rate: 500, steady: 100, streams: 1_000, usagePairs: 4 };
const MAX_LOAD_ROUNDS = Number(option('max-load-rounds', SIZES.usagePairs));
if (!Number.isInteger(MAX_LOAD_ROUNDS) || MAX_LOAD_ROUNDS < 1) throw new Error(`--max-load-rounds=${option('max-load-rounds')}: a whole number of rounds, at least 1`);
const CLIENT_KEY = 'bench-client-key-not-secret';
const ADMIN_KEY = 'bench-admin-key-not-secret';
/**
 * The paired rows' own blocks (keys, tracing, baseline, noise: two targets alone, pairedAddedLatency): 20,000
 * requests a side resolve a few µs on this machine; the shared rounds' 1,200 read ±0.02 ms between runs. Both
 * sides are gateways fresh from their start, and the warmup is long because a fresh gateway's median falls from
 * 0.87 to 0.40 ms over its first 2,500 requests and settles near 0.35 ms after about 8,000 (each kind of request
 * warms its own code).
 */
const PAIRED_SIZES = quick ? { warmup: 1_000, rounds: 4, perRound: 200 } : { warmup: 5_000, rounds: 10, perRound: 2_000 };
/** After a paired row's latency blocks, its gateways' CPU per request, taking turns every `chunk` requests (pairedCpuPerRequest). */
const PAIRED_CPU_SIZES = quick ? { segments: 4, perSegment: 200, chunk: 20 } : { segments: 10, perSegment: 2_000, chunk: 20 };

const log = (line) => process.stderr.write(`[bench] ${line}\n`);

function build() {
  if (flag('no-build')) return;
  log('building the gateway and its workspace dependencies (turbo, cached when unchanged)…');
  try {
    execFileSync('npx', ['turbo', 'run', 'build', '--filter=@mana/llm-gateway...', '--output-logs=errors-only'], {
      cwd: repoRoot,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
    });
  } catch {
    log('build failed: measuring without our gateway unless a previous dist/main.js exists');
  }
}


function machine() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGb: Math.round(os.totalmem() / 1024 ** 3),
    os: `${os.type()} ${os.release()}`,
    node: process.version,
  };
}

/**
 * The saturation scenario (lib/saturation.mjs): 20 s of arrivals per load level (`--quick`: 8 s;
 * `--saturation-seconds=N`), about 3 minutes in all (quick: about 1). Writes its own results file, so
 * running it alone leaves the other sections' latest.{json,md} as they are.
 */
async function saturationSection() {
  const haveOurs = !skip.has('ours') && existsSync(gatewayMain);
  const configs = SATURATION_CONFIGS.filter((c) => (c.gateway === 'portkey' ? !skip.has('portkey') : haveOurs));
  const durationS = Number(option('saturation-seconds', quick ? 8 : 20));
  const date = new Date();
  log(`saturation: ${configs.map((c) => c.key).join(', ')}; ${durationS} s of arrivals per load level…`);
  const saturation = await runSaturation({ durationS, log, configs });
  const results = { date: date.toISOString(), machine: machine(), quick, saturation };
  const markdown = renderSaturationMarkdown(saturation, `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`);
  mkdirSync(outDir, { recursive: true });
  writeFileSync(path.join(outDir, 'saturation.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(path.join(outDir, 'saturation.md'), markdown);
  process.stdout.write(`\n${markdown}`);
  log(`wrote ${path.relative(repoRoot, outDir)}/saturation.json and saturation.md (${saturation.runS.toFixed(0)} s)`);
}

async function main() {
  const startedAt = new Date();
  build();
  if (only === 'saturation') return saturationSection();
  const haveOurs = !skip.has('ours') && existsSync(gatewayMain);
  const havePortkey = !skip.has('portkey');
  if (!haveOurs) log(`our gateway is not measured (${skip.has('ours') ? 'skipped' : `${gatewayMain} missing`})`);

  const tmp = mkdtempSync(path.join(os.tmpdir(), 'mana-bench-'));
  const stops = [];
  const results = {
    date: startedAt.toISOString(),
    machine: machine(),
    quick,
    sizes: SIZES,
    notes: [],
  };
  try {
    const upstream = await startUpstream();
    stops.push(upstream.stop);
    const refusing = await startUpstream();
    stops.push(refusing.stop);
    const hanging = await startUpstream();
    stops.push(hanging.stop);
    log(`fake upstream on ${upstream.url}`);

    const configPath = path.join(tmp, 'bench-aliases.yaml');
    writeFileSync(configPath, gatewayConfig({ upstream, refusing, hanging }));
    const oursEnv = flag('no-auth') ? {} : { MANA_LLM_API_KEYS: CLIENT_KEY };
    const logLevel = option('log-level', 'info');
    if (logLevel !== 'info') results.notes.push(`our gateway ran with LOG_LEVEL=${logLevel} (default info)`);
    if (flag('no-auth')) results.notes.push('our gateway ran without client API keys (default: keys on)');
    const clientAuth = { authorization: `Bearer ${CLIENT_KEY}` };

    const clients = [createClient({ name: 'direct', url: upstream.url, model: 'fast', headers: { authorization: `Bearer ${UPSTREAM_KEY}` } })];
    let ours;
    let oursUsageOff;
    let oursBefore;
    let oursShared;
    let oursTracing;
    let oursKeys;
    let collector;
    let dashboard;
    let portkey;
    /** The paired rows (pairedAddedLatency), each `client` against its `baseline`, measured after the shared rounds into `results[key]`. */
    const pairedRows = [];
    /** A client of one of our gateways, as product code calls it: the chat and embeddings aliases, the client key. */
    const oursClient = (name, gateway) =>
      createClient({ name, url: gateway.url, model: 'mana/fast-text', embeddingModel: 'mana/embed', headers: clientAuth, pid: gateway.pid });
    /**
     * A gateway of this build with the default settings and data of its own, started next to the gateway it is
     * paired with: both sides of a paired row are as old and as warm (against the default gateway, warmed by the
     * sections before, a fresh gateway read +0.02 ms for nothing).
     */
    const startTwin = async (name) => {
      const twin = await startManaGateway({ configPath, env: { ...oursEnv, MANA_LLM_DATA_DIR: path.join(tmp, `data-${name}`) }, logLevel });
      stops.push(twin.stop);
      return oursClient(name, twin);
    };
    if (haveOurs) {
      ours = await startManaGateway({ configPath, env: oursEnv, logLevel });
      stops.push(ours.stop);
      clients.push(oursClient('ours', ours));
      log(`our gateway on ${ours.url} (pid ${ours.pid})`);
      for (const api of OTHER_APIS.filter((a) => !skip.has(a.name))) {
        // The same gateway through another API (Anthropic's Messages, OpenAI's Responses): what its translation costs over chat completions.
        clients.push(createClient({ name: api.client, url: ours.url, model: 'mana/fast-text', headers: api.auth(CLIENT_KEY), api: api.name }));
      }
      if (!skip.has('usage')) {
        // The same gateway with usage recording off: what recording costs, paired round by round.
        oursUsageOff = await startManaGateway({ configPath, env: oursEnv, logLevel, args: ['--usage', 'off'] });
        stops.push(oursUsageOff.stop);
        clients.push(oursClient('ours_usage_off', oursUsageOff));
        log(`our gateway with --usage off on ${oursUsageOff.url} (pid ${oursUsageOff.pid})`);
      }
      if (baselineMain !== undefined) {
        if (!existsSync(baselineMain)) throw new Error(`--baseline: ${baselineMain} is missing (build that checkout first)`);
        // The build before, with the same config and its own usage file: this build against it, in the same run.
        oursBefore = await startManaGateway({ configPath, env: { ...oursEnv, MANA_LLM_DATA_DIR: path.join(tmp, 'data-before') }, logLevel, main: baselineMain });
        stops.push(oursBefore.stop);
        pairedRows.push({
          key: 'baseline',
          baseline: oursClient('ours_before', oursBefore),
          client: await startTwin('ours_this_build'),
          embeddings: true,
          what: `this build against the baseline build (${baselineCheckout})`,
          facts: { checkout: baselineCheckout },
        });
        log(`the baseline build's gateway (${baselineCheckout}) on ${oursBefore.url} (pid ${oursBefore.pid})`);
      }
      if (!skip.has('keys')) {
        // The same gateway holding 1,000 service keys (made through the admin API), called with one of them:
        // what a key check costs among many keys, paired per round against the static key of a twin.
        const keysEnv = { ...oursEnv, MANA_LLM_ADMIN_KEY: ADMIN_KEY, MANA_LLM_DATA_DIR: path.join(tmp, 'data-keys') };
        const creator = await startManaGateway({ configPath, env: keysEnv, logLevel });
        const secrets = await createServiceKeys(creator.url, ADMIN_KEY, SERVICE_KEYS);
        // Measured on a fresh process that loads the keys from the store, as a restart or another replica does: the
        // process that made 1,000 admin writes in a few seconds carries their aftermath (it read +0.015 to +0.023 ms).
        await creator.stop();
        oursKeys = await startManaGateway({ configPath, env: keysEnv, logLevel });
        stops.push(oursKeys.stop);
        const secret = secrets[Math.floor(SERVICE_KEYS / 2)];
        // Against the static key of a twin, in paired blocks of their own: a bound of 0.01 ms needs more samples than the shared rounds take.
        pairedRows.push({
          key: 'keys',
          baseline: await startTwin('ours_static_key'),
          client: createClient({ name: 'ours_keys', url: oursKeys.url, model: 'mana/fast-text', headers: { authorization: `Bearer ${secret}` }, pid: oursKeys.pid }),
          what: `the static key against one of ${SERVICE_KEYS} service keys`,
          facts: { count: SERVICE_KEYS },
        });
        log(`our gateway with ${SERVICE_KEYS} service keys on ${oursKeys.url} (pid ${oursKeys.pid}), called with the ${Math.floor(SERVICE_KEYS / 2) + 1}th`);
      }
      if (!skip.has('tracing')) {
        // Tracing on as a user switches it on, every trace sampled (ratio 1.0), to an OTLP/HTTP receiver in a
        // process of its own that decodes and counts the spans (the testkit's; nothing kept): what tracing costs a request.
        collector = await startCollector();
        stops.push(collector.stop);
        const tracingEnv = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.0' };
        oursTracing = await startManaGateway({ configPath, env: { ...oursEnv, ...tracingEnv, MANA_LLM_DATA_DIR: path.join(tmp, 'data-tracing') }, logLevel });
        stops.push(oursTracing.stop);
        // Against a twin with tracing off, in paired blocks of their own: in the shared rounds, a batch exported
        // 200 ms after a block's first span lands in another target's block.
        pairedRows.push({
          key: 'tracing',
          baseline: await startTwin('ours_tracing_off'),
          client: oursClient('ours_tracing', oursTracing),
          embeddings: true,
          what: 'tracing off against tracing on',
        });
        log(`our gateway with tracing on (OTLP/HTTP to ${collector.url}, sampling 1.0) on ${oursTracing.url} (pid ${oursTracing.pid})`);
      }
      if (!skip.has('noise')) {
        // Two twins, same build and settings: what the paired rows' method reads for nothing (their noise floor).
        pairedRows.push({ key: 'noise', baseline: await startTwin('ours_twin_a'), client: await startTwin('ours_twin_b'), what: 'a twin against a twin' });
      }
      if (!skip.has('shared')) {
        // Several-replicas mode: health, cooldowns and config shared through PostgreSQL (one replica is enough
        // to measure what a request pays for it: requests read only the local cache).
        const { startTestPostgres } = await import(path.join(repoRoot, 'packages/llm-testkit/dist/index.js'));
        const postgres = await startTestPostgres();
        stops.push(() => postgres.stop());
        oursShared = await startManaGateway({ configPath, env: { ...oursEnv, MANA_LLM_DATABASE_URL: postgres.url, MANA_LLM_REPLICA_NAME: 'bench' }, logLevel });
        stops.push(oursShared.stop);
        clients.push(oursClient('ours_shared', oursShared));
        log(`our gateway with MANA_LLM_DATABASE_URL (shared mode) on ${oursShared.url} (pid ${oursShared.pid})`);
      }
      const noDashboard = skip.has('dashboard') ? 'skipped' : dashboardUnavailable();
      if (noDashboard === undefined) {
        // The same gateway with the dashboard open on it in a headless Chromium, polling: what an operator's tab costs.
        const withDashboard = await startManaGateway({ configPath, env: { ...oursEnv, MANA_LLM_ADMIN_KEY: ADMIN_KEY }, logLevel });
        stops.push(withDashboard.stop);
        dashboard = await openDashboard(withDashboard.url, ADMIN_KEY);
        stops.push(() => dashboard.close());
        clients.push(oursClient('ours_dashboard', withDashboard));
        log(`our gateway with the dashboard open and polling on ${withDashboard.url}/ui/ (pid ${withDashboard.pid})`);
      } else {
        log(`dashboard section not measured: ${noDashboard}`);
      }
    }
    const portkeyHeaders = {
      authorization: `Bearer ${UPSTREAM_KEY}`,
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': `${upstream.url}/v1`,
    };
    if (!skip.has('floor')) {
      const floor = await startFloorProxy(upstream);
      stops.push(floor.stop);
      clients.push(createClient({ name: 'floor', url: floor.url, model: 'fast', headers: { authorization: `Bearer ${UPSTREAM_KEY}` } }));
      log(`minimal Node proxy (the floor) on ${floor.url}`);
    }
    if (havePortkey) {
      portkey = await startPortkey();
      stops.push(portkey.stop);
      clients.push(createClient({ name: 'portkey', url: portkey.url, model: 'fast', headers: portkeyHeaders }));
      log(`Portkey on ${portkey.url} (pid ${portkey.pid})`);
    }

    // 1. Added latency, sequential.
    if (!skip.has('latency')) {
      log(`latency: ${SIZES.rounds} interleaved rounds × ${SIZES.perRound} requests per target, non-streaming…`);
      dashboard?.startCounting();
      const plain = await interleavedRounds(clients, { ...SIZES, stream: false });
      log('latency: streaming…');
      const streamed = await interleavedRounds(clients, { ...SIZES, stream: true });
      log('latency: embeddings (one input, 768 floats)…');
      const embedded = await interleavedRounds(clients, { ...SIZES, embeddings: true });
      results.latency = {
        nonStream: addedLatency(plain, 'direct', 'total'),
        streamFirstByte: addedLatency(streamed, 'direct', 'ttfb'),
        streamLastByte: addedLatency(streamed, 'direct', 'total'),
        embeddings: addedLatency(embedded, 'direct', 'total'),
      };
      for (const api of OTHER_APIS.filter((a) => results.latency.nonStream[a.client])) {
        // Paired per round against chat completions on the same gateway.
        const m = {
          nonStreamAddedMs: addedLatency(plain, 'ours', 'total')[api.client].added,
          streamFirstByteAddedMs: addedLatency(streamed, 'ours', 'ttfb')[api.client].added,
          streamLastByteAddedMs: addedLatency(streamed, 'ours', 'total')[api.client].added,
        };
        results[api.name] = m;
        const line = `${api.path} vs /v1/chat/completions on the same gateway, sequential: median added ${m.nonStreamAddedMs.median.toFixed(3)} ms non-streaming, ${m.streamFirstByteAddedMs.median.toFixed(3)} ms streaming first byte, ${m.streamLastByteAddedMs.median.toFixed(3)} ms last byte (paired per round)`;
        results.notes.push(line);
        log(line);
      }
      if (oursShared) {
        // Paired per round against the default gateway (embedded SQLite usage, nothing shared).
        const nonStream = addedLatency(plain, 'ours', 'total').ours_shared.added;
        const streamLastByte = addedLatency(streamed, 'ours', 'total').ours_shared.added;
        results.sharedMode = { nonStreamAddedMs: nonStream, streamLastByteAddedMs: streamLastByte };
        const line = `shared mode (MANA_LLM_DATABASE_URL, PostgreSQL) vs the default, sequential: median added ${nonStream.median.toFixed(3)} ms non-streaming, ${streamLastByte.median.toFixed(3)} ms streaming (paired per round)`;
        results.notes.push(line);
        log(line);
      }
      if (dashboard) {
        const nonStream = results.latency.nonStream;
        results.dashboard = {
          // Each gateway's added latency over direct calls, and the difference paired round by round.
          nonStreamAddedMs: { without: nonStream.ours.added, with: nonStream.ours_dashboard.added },
          streamLastByteAddedMs: { without: results.latency.streamLastByte.ours.added, with: results.latency.streamLastByte.ours_dashboard.added },
          nonStreamDifferenceMs: addedLatency(plain, 'ours', 'total').ours_dashboard.added,
          dashboardCallsPerMinute: dashboard.callsPerMinute(),
        };
        const d = results.dashboard;
        const line =
          `dashboard open and polling (headless Chromium on the Overview, ${d.dashboardCallsPerMinute.toFixed(0)} API calls/min) vs not, same run: ` +
          `median added latency ${d.nonStreamAddedMs.with.median.toFixed(3)} vs ${d.nonStreamAddedMs.without.median.toFixed(3)} ms non-streaming, ` +
          `${d.streamLastByteAddedMs.with.median.toFixed(3)} vs ${d.streamLastByteAddedMs.without.median.toFixed(3)} ms streaming (last byte); ` +
          `paired difference per round ${d.nonStreamDifferenceMs.median.toFixed(3)} ms median`;
        results.notes.push(line);
        log(line);
      }
      for (const row of pairedRows) {
        log(`latency, paired: ${row.what}, ${PAIRED_SIZES.rounds} interleaved rounds × ${PAIRED_SIZES.perRound} requests a side…`);
        results[row.key] = { ...row.facts, ...(await pairedAddedLatency(row.baseline, row.client, PAIRED_SIZES, { embeddings: row.embeddings })) };
        results[row.key].cpuPerRequest = await pairedCpuPerRequest(row.baseline, row.client, PAIRED_CPU_SIZES);
        row.baseline.close();
        row.client.close();
      }
      if (results.keys) {
        const line = `${SERVICE_KEYS} service keys vs the static key, same run (goal: unchanged within 0.01 ms): ${describePaired(results.keys)}`;
        results.notes.push(line);
        log(line);
      }
      if (results.noise) {
        const line = `noise floor of the paired rows (two twins, same build and settings): ${describePaired(results.noise)}`;
        results.notes.push(line);
        log(line);
      }
      if (oursUsageOff) {
        results.usageRecording = {
          nonStreamAddedMs: addedLatency(plain, 'ours_usage_off', 'total').ours.added,
          streamLastByteAddedMs: addedLatency(streamed, 'ours_usage_off', 'total').ours.added,
        };
      }
    }

    // 2. Throughput, load from a separate process.
    if (!skip.has('throughput')) {
      results.throughput = {};
      const targets = [
        { name: 'direct', url: `${upstream.url}/v1/chat/completions`, headers: clients[0].headers, model: 'fast' },
        clients.find((c) => c.name === 'floor') && {
          name: 'floor',
          url: `${clients.find((c) => c.name === 'floor').url}/v1/chat/completions`,
          headers: clients[0].headers,
          model: 'fast',
        },
        ours && { name: 'ours', url: `${ours.url}/v1/chat/completions`, headers: clientAuth, model: 'mana/fast-text', pid: ours.pid },
        oursUsageOff && { name: 'ours_usage_off', url: `${oursUsageOff.url}/v1/chat/completions`, headers: clientAuth, model: 'mana/fast-text', pid: oursUsageOff.pid },
        oursBefore && { name: 'ours_before', url: `${oursBefore.url}/v1/chat/completions`, headers: clientAuth, model: 'mana/fast-text', pid: oursBefore.pid },
        portkey && { name: 'portkey', url: `${portkey.url}/v1/chat/completions`, headers: portkeyHeaders, model: 'fast' },
      ].filter(Boolean);
      for (const target of targets) {
        const body = JSON.stringify({ model: target.model, messages: [{ role: 'user', content: 'Say hello.' }] });
        log(`throughput: ${target.name} max (autocannon, 50 connections, ${SIZES.loadS} s)…`);
        const max = await maxLoad(target, body);
        log(`throughput: ${target.name} at ${SIZES.rate} req/s (${SIZES.loadS} s)…`);
        const fixed = await runLoad({ mode: 'rate', url: target.url, headers: target.headers, body, rate: SIZES.rate, durationS: SIZES.loadS });
        results.throughput[target.name] = { max, fixed };
        if (target.name === 'ours') results.throughput.ours.usageEventsDropped = await usageEventsDropped(ours.url);
      }
      if (oursUsageOff && ours) results.throughput.usagePairs = await usageThroughputPairs(targets, results.throughput, ours.url);
      if (oursBefore && ours) results.throughput.baselinePairs = await alternatingMaxPairs(targets, results.throughput, 'ours', 'ours_before');
    }

    // This build against the baseline build, both measured in this run.
    if (results.baseline || results.throughput?.baselinePairs) {
      const b = results.baseline;
      const pairs = results.throughput?.baselinePairs;
      const parts = [];
      if (b) {
        parts.push(`${describePaired(b)}, this − before`);
      }
      if (pairs) {
        parts.push(
          `max ${Math.round(pairs.a)} vs ${Math.round(pairs.b)} req/s (${(pairs.change * 100).toFixed(1)} %, median of ${pairs.rounds.length} alternating rounds), ` +
            `gateway CPU per request at max load ${pairs.cpuUsPerRequest.a.toFixed(1)} vs ${pairs.cpuUsPerRequest.b.toFixed(1)} µs (${pairs.cpuUsPerRequest.added >= 0 ? '+' : ''}${pairs.cpuUsPerRequest.added.toFixed(1)} µs, median of the rounds' differences)`,
        );
      }
      const line = `this build vs the baseline build (${baselineCheckout}), same run, tracing off in both (goal for a build that adds tracing: ≤ 0.01 ms): ${parts.join('; ')}`;
      results.notes.push(line);
      log(line);
    }

    // Tracing on vs off, both measured in this run (the spans must have reached the receiver: a run that drops measures less work).
    if (results.tracing && oursTracing) {
      // The last batch goes out within the batch processor's 5 s delay (OTEL_BSP_SCHEDULE_DELAY's default).
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      results.tracing.spansReceived = await collector.spanCount();
      results.tracing.spansDropped = await counterValue(oursTracing.url, 'mana_llm_trace_spans_dropped_total');
      const t = results.tracing;
      const line =
        `tracing on (OTLP/HTTP protobuf to a local receiver, sampling 1.0) vs off, same run (goal: ≤ 0.05 ms): ${describePaired(t)}; ` +
        `${t.spansReceived} spans received, ${t.spansDropped} dropped`;
      results.notes.push(line);
      log(line);
    }

    // Usage recording on (the default) vs --usage off, both measured in this run.
    const rec = results.usageRecording;
    const pairs = results.throughput?.usagePairs;
    if (rec || pairs) {
      results.usageRecording = { ...rec, maxRequestsPerSec: pairs };
      const parts = [];
      if (rec) parts.push(`median added ${rec.nonStreamAddedMs.median.toFixed(3)} ms non-streaming, ${rec.streamLastByteAddedMs.median.toFixed(3)} ms streaming (paired per round)`);
      if (pairs) {
        const rounds = pairs.rounds.map((r) => `${Math.round(r.on)}/${Math.round(r.off)}`).join(', ');
        parts.push(
          `max ${Math.round(pairs.on)} vs ${Math.round(pairs.off)} req/s (${(pairs.change * 100).toFixed(1)} %, median of ${pairs.rounds.length} alternating rounds, on/off: ${rounds}), ${pairs.usageEventsDropped} usage events dropped`,
          `gateway CPU per request at max load (all threads) ${pairs.cpuUsPerRequest.on.toFixed(1)} vs ${pairs.cpuUsPerRequest.off.toFixed(1)} µs (+${pairs.cpuUsPerRequest.added.toFixed(1)} µs, median of the rounds' differences)`,
        );
      }
      const line = `usage recording on vs --usage off (goal: ≤ 0.02 ms median, ≥ −5 % max throughput): ${parts.join('; ')}`;
      results.notes.push(line);
      log(line);
    }

    // 3. Failover cost (ours).
    if (ours && !skip.has('failover')) {
      log('failover: first target refusing, then hanging…');
      results.failover = await failoverCost(
        clients.find((c) => c.name === 'ours'),
        { healthy: 'mana/fast-text', refusing: 'mana/long-form', hanging: 'mana/structured' },
        { refusing, hanging },
        {
          firstByteTimeoutMs: FIRST_BYTE_TIMEOUT_MS,
          steady: SIZES.steady,
          renameRefusing: async (n) => {
            const primary = `primary${n}`;
            writeFileSync(configPath, gatewayConfig({ upstream, refusing, hanging, primary }));
            ours.child.kill('SIGHUP');
            await waitFor(
              async () => {
                const response = await fetch(`${ours.url}/v1/aliases`, { headers: clientAuth });
                return (await response.text()).includes(`${primary}/fast`);
              },
              { timeoutMs: 5_000, what: 'config reload', intervalMs: 20 },
            );
          },
        },
      );
    }

    // 4. Memory, each gateway freshly started.
    if (!skip.has('memory')) {
      results.memory = {};
      for (const client of clients) client.close();
      for (const stop of stops.splice(3)) await stop();
      if (haveOurs) {
        log(`memory: our gateway with ${SIZES.streams} open streams…`);
        writeFileSync(configPath, gatewayConfig({ upstream, refusing, hanging }));
        const gcPreload = fileURLToPath(new URL('./lib/gc-on-signal.cjs', import.meta.url));
        const fresh = await startManaGateway({ configPath, env: oursEnv, logLevel, nodeArgs: ['--expose-gc', '--require', gcPreload] });
        stops.push(fresh.stop);
        const client = createClient({ name: 'ours', url: fresh.url, model: 'mana/fast-text', headers: clientAuth });
        // V8 heap in use, from the gateway's own /metrics: tells retained memory from pages V8 keeps.
        const heapMb = async () => {
          const text = await (await fetch(`${fresh.url}/metrics`, { headers: clientAuth })).text();
          return Number(/^nodejs_heap_size_used_bytes (\S+)/m.exec(text)?.[1]) / 1024 ** 2;
        };
        results.memory.ours = await memoryUnderStreams(fresh, client, upstream, {
          count: SIZES.streams,
          model: 'mana/reasoning',
          warmup: 200,
          heapMb,
          forceGc: () => fresh.child.kill('SIGUSR2'),
        });
        client.close();
        await stops.pop()();
      }
      if (havePortkey) {
        log(`memory: Portkey with ${SIZES.streams} open streams…`);
        const fresh = await startPortkey();
        stops.push(fresh.stop);
        const client = createClient({ name: 'portkey', url: fresh.url, model: 'fast', headers: portkeyHeaders });
        results.memory.portkey = await memoryUnderStreams(fresh, client, upstream, { count: SIZES.streams, model: 'slow-stream', warmup: 200 });
        client.close();
        await stops.pop()();
      }
    }
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    rmSync(tmp, { recursive: true, force: true });
  }

  results.durationS = (Date.now() - startedAt.getTime()) / 1_000;
  results.targets = evaluateTargets(results);
  mkdirSync(outDir, { recursive: true });
  writeFileSync(path.join(outDir, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(path.join(outDir, 'latest.md'), renderMarkdown(results));
  process.stdout.write(renderTerminal(results));
  log(`wrote ${path.relative(repoRoot, outDir)}/latest.json and latest.md (${results.durationS.toFixed(0)} s)`);
  if (!skip.has('saturation')) await saturationSection();
}

main().catch((error) => {
  process.stderr.write(`[bench] failed: ${error.stack ?? error}\n`);
  process.exitCode = 1;
});

/**
 * Max throughput of two of our gateways in alternating rounds (the first is
 * the throughput section's own pair; the order flips every round): runs of
 * one gateway vary by ±10 % on this machine, more than what is being
 * measured, so one pair of runs cannot tell −15 % from −20 %. Reports the
 * median over rounds of a/b, the medians of each side, and the same for the
 * gateway's CPU per request (whatever the machine's other processes take of
 * the cores).
 */
async function alternatingMaxPairs(targets, throughput, nameA, nameB) {
  const a = targets.find((t) => t.name === nameA);
  const b = targets.find((t) => t.name === nameB);
  const body = JSON.stringify({ model: a.model, messages: [{ role: 'user', content: 'Say hello.' }] });
  const roundOf = (aMax, bMax) => ({ a: aMax.requestsPerSec, b: bMax.requestsPerSec, aCpuUs: aMax.cpuUsPerRequest, bCpuUs: bMax.cpuUsPerRequest });
  const rounds = [roundOf(throughput[nameA].max, throughput[nameB].max)];
  for (let i = 1; i < MAX_LOAD_ROUNDS; i++) {
    const max = {};
    for (const target of i % 2 === 1 ? [b, a] : [a, b]) {
      log(`throughput: ${target.name} max, paired round (${SIZES.loadS} s)…`);
      max[target.name] = await maxLoad(target, body);
    }
    rounds.push(roundOf(max[nameA], max[nameB]));
  }
  return {
    a: median(rounds.map((r) => r.a)),
    b: median(rounds.map((r) => r.b)),
    change: median(rounds.map((r) => r.a / r.b)) - 1,
    cpuUsPerRequest: { a: median(rounds.map((r) => r.aCpuUs)), b: median(rounds.map((r) => r.bCpuUs)), added: median(rounds.map((r) => r.aCpuUs - r.bCpuUs)) },
    rounds,
  };
}

/** Usage recording on (`ours`) against off (`ours_usage_off`), as alternatingMaxPairs measures them, with the events dropped meanwhile. */
async function usageThroughputPairs(targets, throughput, oursUrl) {
  const pairs = await alternatingMaxPairs(targets, throughput, 'ours', 'ours_usage_off');
  const onOff = (r) => ({ on: r.a, off: r.b, onCpuUs: r.aCpuUs, offCpuUs: r.bCpuUs });
  return {
    on: pairs.a,
    off: pairs.b,
    change: pairs.change,
    cpuUsPerRequest: { on: pairs.cpuUsPerRequest.a, off: pairs.cpuUsPerRequest.b, added: pairs.cpuUsPerRequest.added },
    rounds: pairs.rounds.map(onOff),
    usageEventsDropped: await usageEventsDropped(oursUrl),
  };
}

/**
 * A max-throughput load (autocannon, 50 connections), with the CPU per
 * request of the target's process (all its threads) when its pid is known.
 */
async function maxLoad(target, body) {
  const before = target.pid === undefined ? undefined : cpuMs(target.pid);
  const result = await runLoad({ mode: 'max', url: target.url, headers: target.headers, body, connections: 50, durationS: SIZES.loadS });
  if (before === undefined) return result;
  const after = cpuMs(target.pid);
  return { ...result, cpuUsPerRequest: ((after.user + after.system - before.user - before.system) * 1_000) / result.total };
}
