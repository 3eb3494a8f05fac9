// Where our gateway's CPU goes per request, under load:
//
//   node bench/profile.mjs [--sequential] [--stream] [--duration=S] [--requests=N]
//                          [--connections=N] [--usage=off] [--target=floor] [--top=N] [--keep]
//                          [--no-profile] [--main=PATH]
//
// Starts the benchmark's fake upstream (bench/lib/upstream.mjs: pre-built
// answers, nothing recorded, so the upstream stays flat under load; the
// testkit's fakes record every request, right for tests, wrong here) and the
// built gateway (apps/llm-gateway/dist/main.js) under `node --cpu-prof`, with
// the benchmark's config, client keys and request log at info, as `pnpm bench`
// runs it. Then:
//   default       autocannon from a separate process (bench/lib/load.mjs),
//                 50 connections for --duration seconds (10): the max-throughput load
//   --sequential  --requests sequential requests (20,000): the latency rounds' load
// --usage=off starts the gateway with `--usage off`; --target=floor profiles
// the minimal Node proxy instead (what any Node gateway spends).
// --no-profile measures CPU per request only, without the profiler's own cost;
// --main=PATH runs another build of the gateway (an A/B of two builds: copy
// `apps/` and `packages/` of the "before" checkout aside, link its
// `node_modules`, and alternate runs of both).
//
// Prints the usage events the gateway dropped during the run (a recording that
// falls behind drops them, and a run that drops did less work than it claims),
// the resident memory at the end, and CPU per request: the whole process (all threads, from /proc), the
// request thread and each other thread (from /proc: the usage writer, V8's garbage-collector helpers), the
// main thread (the profile's non-idle samples), and the main thread split by
// cost (self time grouped by library / our source file), the functions with
// the most self time, and our own functions with the most inclusive time.
// --keep leaves the .cpuprofile under bench/results/raw/ (git-ignored) for a
// flame graph (Chrome DevTools › Performance › Load profile, or speedscope).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from './lib/http-client.mjs';
import { runLoad } from './lib/run-load.mjs';
import { usageEventsDropped } from './lib/gateway-metrics.mjs';
import { UPSTREAM_KEY, gatewayConfig } from './lib/gateway-config.mjs';
import { cpuMs, repoRoot, startFloorProxy, startManaGateway, startUpstream, threadCpuMs } from './lib/procs.mjs';
import { flag, option } from './lib/options.mjs';

const stream = flag('stream');
const sequential = flag('sequential');
const requests = Number(option('requests', 20_000));
const durationS = Number(option('duration', 10));
const connections = Number(option('connections', 50));
const top = Number(option('top', 20));
const floor = option('target', 'ours') === 'floor';
const usageOff = option('usage', 'on') === 'off';
const profiling = !flag('no-profile');
const main = option('main', undefined);
const CLIENT_KEY = 'bench-client-key-not-secret';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'mana-profile-'));
const upstream = await startUpstream();
const profArgs = profiling ? ['--cpu-prof', `--cpu-prof-dir=${tmp}`] : [];
let target;
let model = 'mana/fast-text';
let headers = { authorization: `Bearer ${CLIENT_KEY}` };
if (floor) {
  target = await startFloorProxy(upstream, profArgs);
  model = 'fast';
  headers = { authorization: `Bearer ${UPSTREAM_KEY}` };
} else {
  const configPath = path.join(tmp, 'aliases.yaml');
  writeFileSync(configPath, gatewayConfig({ upstream }));
  target = await startManaGateway({
    configPath,
    env: { MANA_LLM_API_KEYS: CLIENT_KEY },
    args: usageOff ? ['--usage', 'off'] : [],
    nodeArgs: profArgs,
    ...(main === undefined ? {} : { main: path.resolve(main) }),
  });
}

// Warm-up (JIT, connections) before the measured part; it is in the profile too, a small share.
const client = createClient({ name: 'target', url: target.url, model, headers });
for (let i = 0; i < 500; i += 1) await client.chat({ stream });
const cpuBefore = cpuMs(target.pid);
const mainBefore = cpuMs(target.pid, target.pid);
const threadsBefore = threadCpuMs(target.pid);
const started = performance.now();
let done;
let reqPerSec;
if (sequential) {
  for (let i = 0; i < requests; i += 1) {
    const result = await client.chat({ stream });
    if (result.status !== 200) throw new Error(`status ${result.status}`);
  }
  done = requests;
  reqPerSec = requests / ((performance.now() - started) / 1_000);
} else {
  const body = JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'Say hello.' }] });
  const load = await runLoad({ mode: 'max', url: `${target.url}/v1/chat/completions`, headers, body, connections, durationS });
  if (load.non2xx || load.errors) throw new Error(`load: ${load.non2xx} non-2xx, ${load.errors} errors`);
  done = load.total;
  reqPerSec = load.requestsPerSec;
}
const wallMs = performance.now() - started;
const cpuAfter = cpuMs(target.pid);
const mainAfter = cpuMs(target.pid, target.pid);
// The other threads, busiest first: with usage on, the usage writer leads, then V8's garbage-collector helpers (shared by both threads' heaps).
const otherThreadsUs = [...threadCpuMs(target.pid)]
  .filter(([thread]) => thread !== target.pid)
  .map(([thread, ms]) => ((ms - (threadsBefore.get(thread) ?? 0)) * 1_000) / done)
  .filter((us) => us >= 0.1)
  .sort((a, b) => b - a);
const userUs = ((cpuAfter.user - cpuBefore.user) * 1_000) / done;
const systemUs = ((cpuAfter.system - cpuBefore.system) * 1_000) / done;
const mainThreadUs = ((mainAfter.user + mainAfter.system - mainBefore.user - mainBefore.system) * 1_000) / done;
const dropped = floor || usageOff ? undefined : await usageEventsDropped(target.url);
const rssMb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${target.pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
client.close();
await target.stop();
await upstream.stop();

const what = `${floor ? 'the Node floor' : `our gateway${usageOff ? ' (--usage off)' : ''}${main === undefined ? '' : ` (${main})`}`}, ${stream ? 'streaming' : 'non-streaming'}`;
const load = `${sequential ? `${done} sequential requests` : `autocannon, ${connections} connections, ${durationS} s: ${done} requests`}${dropped === undefined ? '' : `, ${dropped} usage events dropped`}`;
const cpuLine = `CPU per request: ${(userUs + systemUs).toFixed(1)} µs whole process, all threads (${userUs.toFixed(1)} user + ${systemUs.toFixed(1)} system), ${mainThreadUs.toFixed(1)} on the request thread, ${otherThreadsUs.map((us) => us.toFixed(1)).join(' + ') || 'nothing'} on the other threads; RSS at the end ${rssMb.toFixed(0)} MB`;
if (!profiling) {
  process.stdout.write(`${what}; ${load}; ${reqPerSec.toFixed(0)} req/s\n${cpuLine}\n`);
  rmSync(tmp, { recursive: true, force: true });
  process.exit(0);
}
// Node writes one profile per thread: CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile,
// the main thread's id 0, the usage writer's a higher one.
const threadOf = (name) => Number(name.split('.')[4]);
const files = readdirSync(tmp)
  .filter((f) => f.endsWith('.cpuprofile'))
  .sort((a, b) => threadOf(a) - threadOf(b));
if (files.length === 0) throw new Error('no .cpuprofile written (did the process exit cleanly?)');
const file = files[0];

/** Samples of `profile` that fall in the measured window (after the warm-up, before shutdown). */
function measuredSamples(profile) {
  const windowEnd = profile.endTime - 500_000; // the last 0.5 s is shutdown
  const windowStart = windowEnd - wallMs * 1_000 + 500_000;
  const ids = [];
  const deltas = [];
  let t = profile.startTime; // µs, same clock as timeDeltas
  for (let i = 0; i < profile.samples.length; i += 1) {
    t += profile.timeDeltas[i];
    if (t >= windowStart && t <= windowEnd) {
      ids.push(profile.samples[i]);
      deltas.push(profile.timeDeltas[i]);
    }
  }
  return { ids, deltas, requests: done * ((windowEnd - windowStart) / 1_000 / wallMs) };
}

const profile = JSON.parse(readFileSync(path.join(tmp, file), 'utf8'));
const { ids: sampleIds, deltas: sampleDeltas, requests: mainWindowRequests } = measuredSamples(profile);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

/** Where a frame comes from: a short name per library, our files by path. */
function where(url) {
  if (!url) return '';
  const pkg = /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1];
  return url.replace(`file://${repoRoot}`, '').replace(/^(apps|packages)\/([^/]+)\/dist\//, '$2/');
}

/** The cost a frame's self time is charged to. */
function category(frame) {
  const { functionName: fn, url } = frame;
  if (fn === '(idle)') return undefined;
  if (fn === '(garbage collector)') return 'V8: garbage collection';
  if (fn === '(program)') return 'V8/native: (program)';
  const w = where(url);
  if (w === '') return `native: ${fn || '(anonymous)'}`;
  if (w.startsWith('undici')) return 'undici (upstream request, response parse)';
  if (/^(pino|sonic-boom|fast-redact|quick-format-unescaped|fast-safe-stringify|thread-stream|atomic-sleep|on-exit-leak-free)/.test(w)) return 'pino (request log line)';
  if (/^(prom-client|tdigest|bintrees)/.test(w)) return 'prom-client (metrics)';
  if (/^(@mana\/llm-usage-store|better-sqlite3|kysely)|^llm-usage-store\/|^llm-gateway\/usage\//.test(w)) return `usage recording: ${w}`;
  if (w.startsWith('llm-gateway/') || w.startsWith('llm-router/')) return w;
  if (w.startsWith('node:')) {
    if (/^node:(_http|net|stream|internal\/(streams|http|stream_base)|events)/.test(w)) return 'node: http server, sockets, streams, events';
    if (/^node:internal\/(process\/task_queues|timers|async_hooks)|^node:timers/.test(w)) return 'node: microtasks, timers';
    return `node: ${w.slice(5)}`;
  }
  return w;
}

const selfHits = new Map();
const catHits = new Map();
const inclusive = new Map();
let busy = 0;
const stackKeys = new Map(); // node id → distinct keys of our own functions on its stack
const key = (frame) => `${frame.functionName || '(anonymous)'} ${where(frame.url)}:${frame.lineNumber + 1}`;
const own = (frame) => /^(llm-gateway|llm-router|llm-usage-store)\//.test(where(frame.url));
function keysOf(id) {
  let keys = stackKeys.get(id);
  if (keys !== undefined) return keys;
  const node = byId.get(id);
  const up = parent.has(id) ? keysOf(parent.get(id)) : [];
  keys = own(node.callFrame) && !up.includes(key(node.callFrame)) ? [...up, key(node.callFrame)] : up;
  stackKeys.set(id, keys);
  return keys;
}
for (let i = 0; i < sampleIds.length; i += 1) {
  const node = byId.get(sampleIds[i]);
  const cat = category(node.callFrame);
  if (cat === undefined) continue;
  const us = sampleDeltas[i];
  busy += us;
  catHits.set(cat, (catHits.get(cat) ?? 0) + us);
  const k = key(node.callFrame);
  selfHits.set(k, (selfHits.get(k) ?? 0) + us);
  for (const ik of keysOf(node.id)) inclusive.set(ik, (inclusive.get(ik) ?? 0) + us);
}

const perReq = (us) => us / mainWindowRequests;
const show = (map, n, minUs = 0) =>
  [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .filter(([, v]) => perReq(v) >= minUs)
    .slice(0, n)
    .map(([k, v]) => `${perReq(v).toFixed(1).padStart(7)} µs ${((100 * v) / busy).toFixed(1).padStart(5)}%  ${k}`)
    .join('\n');
process.stdout.write(
  `${what}; ${load}; ${reqPerSec.toFixed(0)} req/s\n` +
    `${cpuLine}; ${perReq(busy).toFixed(1)} µs main thread (profile samples, wall clock while not idle)\n` +
    `\nmain thread by cost (self time, µs per request):\n${show(catHits, 40, 0.5)}\n` +
    `\nfunctions by self time (top ${top}):\n${show(selfHits, top)}\n` +
    `\nour functions by inclusive time (top ${top}; async functions count until their first await):\n${show(inclusive, top)}\n`,
);
// Other threads (the usage writer): self time by function, per request of the same window.
for (const other of files.slice(1)) {
  const p = JSON.parse(readFileSync(path.join(tmp, other), 'utf8'));
  const { ids, deltas, requests } = measuredSamples(p);
  const nodes = new Map(p.nodes.map((n) => [n.id, n]));
  const hits = new Map();
  let total = 0;
  for (let i = 0; i < ids.length; i += 1) {
    const frame = nodes.get(ids[i]).callFrame;
    if (frame.functionName === '(idle)') continue;
    total += deltas[i];
    const k = key(frame);
    hits.set(k, (hits.get(k) ?? 0) + deltas[i]);
  }
  const top10 = [...hits.entries()]
    .sort((x, y) => y[1] - x[1])
    .slice(0, 10)
    .map(([k, v]) => `${(v / requests).toFixed(1).padStart(7)} µs ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`)
    .join('\n');
  process.stdout.write(`\nthread ${threadOf(other)} (the usage writer): ${(total / requests).toFixed(1)} µs per request while not idle; functions by self time:\n${top10}\n`);
}
if (flag('keep')) {
  const raw = path.join(repoRoot, 'bench/results/raw');
  mkdirSync(raw, { recursive: true });
  const name = `${floor ? 'floor' : 'gateway'}-${stream ? 'stream' : 'json'}-${sequential ? 'sequential' : 'load'}.cpuprofile`;
  renameSync(path.join(tmp, file), path.join(raw, name));
  process.stdout.write(`\nkept bench/results/raw/${name}\n`);
}
rmSync(tmp, { recursive: true, force: true });
