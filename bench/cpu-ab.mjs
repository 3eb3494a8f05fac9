// Gateway CPU per request, this build against another (A/B), over many fresh
// process pairs: the figure a change is held to when its bound is a few µs.
//
//   node bench/cpu-ab.mjs --baseline=CHECKOUT [--pairs=12] [--segments=10] [--warmup=8000]
//   node bench/cpu-ab.mjs --twins [--pairs=12]        (this build against itself: the method's floor)
//
// Each pair is two gateways started side by side on the bench's config and
// fake upstream, warmed with --warmup non-streaming requests each, then
// measured by lib/cpu-per-request.mjs (turns every 20 requests, --segments of
// 2,000 a side, each process's CPU from the scheduler's count). The start order
// flips every pair.
//
// Why many pairs: two processes of one build differ by a few µs per request
// for as long as they live (their memory layout, what the JIT chose), so one
// pair, however long, reads ±5 µs for nothing on this machine. The median and
// the mean with its standard error over pairs of both orders resolve about
// 2 µs with 12 pairs. Needs both builds (`pnpm build` here and in CHECKOUT).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pairedCpuPerRequest } from './lib/cpu-per-request.mjs';
import { gatewayConfig } from './lib/gateway-config.mjs';
import { createClient } from './lib/http-client.mjs';
import { expectCompletion } from './lib/latency.mjs';
import { gatewayMain, startManaGateway, startUpstream } from './lib/procs.mjs';
import { meanWithError, median } from './lib/stats.mjs';
import { flag, option } from './lib/options.mjs';

const twins = flag('twins');
const baselineCheckout = option('baseline', undefined);
if (twins === (baselineCheckout !== undefined)) throw new Error('give --baseline=CHECKOUT or --twins (one of them)');
const baselineMain = twins ? gatewayMain : path.resolve(baselineCheckout, 'apps/llm-gateway/dist/main.js');
if (!existsSync(baselineMain)) throw new Error(`${baselineMain} is missing (build that checkout first)`);
const PAIRS = Number(option('pairs', '12'));
const SEGMENTS = Number(option('segments', '10'));
const WARMUP = Number(option('warmup', '8000'));
const CLIENT_KEY = 'bench-client-key-not-secret';

/** One pair: both gateways fresh; `thisFirst` says which starts first. Returns this build's CPU per request minus the baseline's, in µs. */
async function measurePair(configPath, tmp, index, thisFirst) {
  const builds = thisFirst ? [gatewayMain, baselineMain] : [baselineMain, gatewayMain];
  const gateways = [];
  try {
    for (const [side, main] of builds.entries()) {
      const env = { MANA_LLM_API_KEYS: CLIENT_KEY, MANA_LLM_DATA_DIR: path.join(tmp, `pair-${index}-${side}`) };
      gateways.push(await startManaGateway({ configPath, env, main }));
    }
    const [first, second] = gateways.map((g, side) =>
      createClient({ name: `side-${side}`, url: g.url, model: 'mana/fast-text', headers: { authorization: `Bearer ${CLIENT_KEY}` }, pid: g.pid }),
    );
    for (let i = 0; i < WARMUP; i += 1) {
      await expectCompletion(first, false);
      await expectCompletion(second, false);
    }
    const figures = await pairedCpuPerRequest(first, second, { segments: SEGMENTS, perSegment: 2_000, chunk: 20 });
    first.close();
    second.close();
    // figures.added is second − first; this build is the second when the baseline started first.
    return { thisMinusBefore: thisFirst ? -figures.added.median : figures.added.median, thisUs: thisFirst ? figures.baselineUs.median : figures.clientUs.median };
  } finally {
    await Promise.all(gateways.map((g) => g.stop()));
  }
}

const tmp = mkdtempSync(path.join(os.tmpdir(), 'mana-cpu-ab-'));
const upstream = await startUpstream();
try {
  const configPath = path.join(tmp, 'bench-aliases.yaml');
  writeFileSync(configPath, gatewayConfig({ upstream }));
  const readings = [];
  for (let index = 0; index < PAIRS; index += 1) {
    const reading = await measurePair(configPath, tmp, index, index % 2 === 1);
    readings.push(reading);
    console.log(`pair ${index + 1}/${PAIRS}: ${reading.thisMinusBefore >= 0 ? '+' : ''}${reading.thisMinusBefore.toFixed(1)} µs (this build ${reading.thisUs.toFixed(1)} µs per request)`);
  }
  const diffs = readings.map((r) => r.thisMinusBefore);
  const { mean, standardError } = meanWithError(diffs);
  const against = twins ? 'a twin of this build' : baselineCheckout;
  console.log(
    `gateway CPU per request, this build − ${against}: median ${median(diffs).toFixed(1)} µs, mean ${mean.toFixed(1)} ± ${standardError.toFixed(1)} µs (standard error) ` +
      `over ${PAIRS} process pairs, start order flipping (sequential, non-streaming, all threads; this build ${median(readings.map((r) => r.thisUs)).toFixed(1)} µs per request)`,
  );
} finally {
  await upstream.stop();
  rmSync(tmp, { recursive: true, force: true });
}
