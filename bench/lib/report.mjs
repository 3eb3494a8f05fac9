// Turns a results object into the target verdicts, the terminal table and the
// Markdown file. Every figure printed comes from results (latest.json).
import { OTHER_APIS } from './chat-apis.mjs';
import { SERVICE_KEYS } from './service-keys.mjs';

const NEAR_IDLE_MB = 30; // "back near idle": within 30 MB of the idle RSS

const ms = (value, digits = 3) => (Number.isFinite(value) ? `${value.toFixed(digits)} ms` : '–');
const num = (value, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : '–');
const times = (value) => (Number.isFinite(value) ? `${value < 0.1 ? value.toPrecision(2) : value.toFixed(2)}×` : '–');
const mb = (value) => (Number.isFinite(value) ? `${value.toFixed(1)} MB` : '–');
const pair = (summary) => (summary ? `${num(summary.median, 3)} / ${num(summary.p99, 3)}` : '–');

/** RSS with 1,000 open streams in the run of 2026-11-30 08:34, before the usage recorder existed: the memory bound (no worse than then). */
const OPEN_STREAMS_BOUND_MB = 131;

/**
 * Every target with our figure, its bound in this run and a verdict (null: not
 * measured). Bounds relative to the Node floor or Portkey are computed from the
 * same run: only ratios within one run are comparable on a shared machine.
 */
export function evaluateTargets(results) {
  const targets = [];
  const have = (...values) => values.every(Number.isFinite);
  const add = (name, goal, value, bound, met) => targets.push({ name, goal, value, bound, met: met === undefined ? null : Boolean(met) });
  /** Our time (ms) within `marginMs` of the Node floor's in the same run. */
  const addNearFloor = (name, ours, floor, marginMs) =>
    add(name, `≤ floor’s + ${marginMs} ms`, ms(ours), have(floor) ? ms(floor + marginMs) : '–', have(ours, floor) ? ours <= floor + marginMs : undefined);
  const lat = results.latency;
  const oursAdded = lat?.nonStream?.ours?.added?.median;
  const floorAdded = lat?.nonStream?.floor?.added?.median;
  const portkeyAdded = lat?.nonStream?.portkey?.added?.median;
  const tOurs = results.throughput?.ours?.max?.requestsPerSec;
  const tFloor = results.throughput?.floor?.max?.requestsPerSec;
  const tPortkey = results.throughput?.portkey?.max?.requestsPerSec;
  const rate = results.sizes?.rate ?? 500;

  // Hot path (#15): within reach of the Node floor.
  add(
    'Max throughput, non-streaming, vs the Node floor',
    '≥ 75 % of the floor’s',
    have(tOurs, tFloor) ? `${num(tOurs)} req/s = ${((100 * tOurs) / tFloor).toFixed(0)} % of ${num(tFloor)}` : '–',
    have(tFloor) ? `${num(0.75 * tFloor)} req/s` : '–',
    have(tOurs, tFloor) ? tOurs >= 0.75 * tFloor : undefined,
  );
  addNearFloor('Median added latency, sequential, non-streaming, vs the floor', oursAdded, floorAdded, 0.05);
  add(
    'Median added latency, sequential, non-streaming, vs Portkey',
    '≤ 0.25 × Portkey’s',
    have(oursAdded, portkeyAdded) ? `${ms(oursAdded)} = ${(oursAdded / portkeyAdded).toFixed(2)} × ${ms(portkeyAdded)}` : ms(oursAdded),
    have(portkeyAdded) ? ms(0.25 * portkeyAdded) : '–',
    have(oursAdded, portkeyAdded) ? oursAdded <= 0.25 * portkeyAdded : undefined,
  );
  const ttfb = lat?.streamFirstByte?.ours?.added?.median;
  const floorTtfb = lat?.streamFirstByte?.floor?.added?.median;
  addNearFloor('Streaming first byte, median added, vs the floor', ttfb, floorTtfb, 0.1);
  const p99 = results.throughput?.ours?.fixed?.latencyP99Ms;
  const floorP99 = results.throughput?.floor?.fixed?.latencyP99Ms;
  addNearFloor(`p99 at ${rate} req/s, vs the floor`, p99, floorP99, 1);
  const mem = results.memory?.ours;
  add(
    `RSS with ${mem?.count ?? 1000} open streams`,
    `≤ ${OPEN_STREAMS_BOUND_MB} MB`,
    mem ? `${mb(mem.openMb)} (idle ${mb(mem.idleMb)})` : '–',
    `${OPEN_STREAMS_BOUND_MB} MB`,
    mem ? mem.openMb <= OPEN_STREAMS_BOUND_MB && mem.completed === mem.count : undefined,
  );

  // Earlier targets, still held.
  add('Median added latency, sequential, non-streaming (absolute)', '≤ 0.3 ms', ms(oursAdded), '0.300 ms', have(oursAdded) ? oursAdded <= 0.3 : undefined);
  add(
    'Throughput vs Portkey (max req/s)',
    '≥ 3×',
    have(tOurs, tPortkey) ? `${num(tOurs)} vs ${num(tPortkey)} req/s = ${times(tOurs / tPortkey)}` : '–',
    have(tPortkey) ? `${num(3 * tPortkey)} req/s` : '–',
    have(tOurs, tPortkey) ? tOurs >= 3 * tPortkey : undefined,
  );
  add(
    `${mem?.count ?? 1000} open streams: back near idle after they end`,
    `settled ≤ idle + ${NEAR_IDLE_MB} MB`,
    mem
      ? `idle ${mb(mem.idleMb)} → settled ${mb(mem.afterMb)}` +
          (mem.heap ? ` (after a forced GC: RSS ${mb(mem.afterGcMb)}, heap ${mb(mem.heap.afterGcMb)} vs ${mb(mem.heap.idleMb)} idle)` : '')
      : '–',
    mem ? mb(mem.idleMb + NEAR_IDLE_MB) : '–',
    mem ? mem.afterMb <= mem.idleMb + NEAR_IDLE_MB : undefined,
  );
  /** A figure of this run, in ms, that must stay at or below `boundMs`. */
  const addAtMost = (name, goal, figure, boundMs) => add(name, goal, ms(figure), ms(boundMs), have(figure) ? figure <= boundMs : undefined);
  const firstBytePair = (figures) => [
    ['non-streaming', figures?.nonStreamAddedMs?.median],
    ['streaming first byte', figures?.streamFirstByteAddedMs?.median],
  ];
  for (const api of OTHER_APIS) {
    for (const [label, figure] of firstBytePair(results[api.name])) {
      addAtMost(`${api.label} (${api.path}) vs chat completions: median added latency, sequential, ${label}`, '≤ 0.05 ms (the translation)', figure, 0.05);
    }
  }
  addAtMost(
    'Shared mode (MANA_LLM_DATABASE_URL) vs the default: median added latency, sequential, non-streaming',
    '≤ 0.05 ms (no measurable cost)',
    results.sharedMode?.nonStreamAddedMs?.median,
    0.05,
  );
  for (const [label, figure] of firstBytePair(results.keys)) {
    // Unchanged within the bound, either way.
    add(`${SERVICE_KEYS} service keys vs the static key: median added latency, sequential, ${label}`, 'unchanged within 0.01 ms (a digest lookup)', ms(figure), ms(0.01), have(figure) ? Math.abs(figure) <= 0.01 : undefined);
  }
  for (const [label, figure] of firstBytePair(results.tracing)) {
    addAtMost(`Tracing on (OTLP/HTTP to a local receiver, sampling 1.0) vs off: median added latency, sequential, ${label}`, '≤ 0.05 ms', figure, 0.05);
  }
  for (const [label, figure] of firstBytePair(results.baseline)) {
    addAtMost(`This build vs the baseline build (--baseline), tracing off: median added latency, sequential, ${label}`, '≤ 0.01 ms (tracing off costs nothing measurable)', figure, 0.01);
  }
  const refuse = results.failover?.refuse;
  add(
    'Failover past a refusing target (first request, before the health cache knows)',
    '≤ 2 ms added',
    refuse ? `${ms(refuse.firstRequestAddedMs)} first; median of ${refuse.unknownCount} such requests: ${ms(refuse.unknownAddedMedianMs)}` : '–',
    '2.000 ms',
    refuse ? refuse.unknownAddedMedianMs <= 2 : undefined,
  );
  return targets;
}

/** One line per target for the end of the terminal output: verdict, name, our figure, the bound. */
export function verdictLines(targets) {
  const mark = (met) => (met === null ? 'n/a ' : met ? 'PASS' : 'MISS');
  return targets.map((t) => `${mark(t.met)}  ${t.name}: ${t.value} (bound ${t.bound}; goal ${t.goal})`).join('\n');
}

function latencyTable(lat) {
  const rows = [
    ['non-streaming (last byte)', lat.nonStream],
    ['streaming, first byte', lat.streamFirstByte],
    ['streaming, last byte', lat.streamLastByte],
    // Older result files have no embeddings row.
    ...(lat.embeddings === undefined ? [] : [['embeddings, one input (last byte)', lat.embeddings]]),
  ];
  const lines = [
    '| sequential, ms (median / p99 of per-round medians) | direct | Node floor | ours | Portkey | floor added | ours added | Portkey added | ours ÷ direct | ours added ÷ Portkey added |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [label, figures] of rows) {
    const { direct: d, floor: f, ours: o, portkey: p } = figures;
    lines.push(
      `| ${label} | ${pair(d.absolute)} | ${pair(f?.absolute)} | ${pair(o?.absolute)} | ${pair(p?.absolute)} | ${pair(f?.added)} | ${pair(o?.added)} | ${pair(
        p?.added,
      )} | ${o ? times(o.absolute.median / d.absolute.median) : '–'} | ${o && p ? (o.added.median / p.added.median).toFixed(2) : '–'} |`,
    );
  }
  return lines.join('\n');
}

/** Our gateway through another API (/v1/messages, /v1/responses) next to its chat completions: each one's added latency over direct calls, and the paired difference. */
function otherApiTable(lat, api, m) {
  const rows = [
    ['non-streaming (last byte)', lat.nonStream, m.nonStreamAddedMs],
    ['streaming, first byte', lat.streamFirstByte, m.streamFirstByteAddedMs],
    ['streaming, last byte', lat.streamLastByte, m.streamLastByteAddedMs],
  ];
  return [
    `| sequential, ms (median / p99 of per-round medians) | ours, chat completions, added | ours, ${api.path}, added | ${api.path} − chat completions (paired per round) |`,
    '|---|---|---|---|',
    ...rows.map(([label, figures, difference]) => `| ${label} | ${pair(figures.ours?.added)} | ${pair(figures[api.client]?.added)} | ${pair(difference)} |`),
  ].join('\n');
}

function throughputTable(t, rate) {
  const cell = (name, pick) => (t[name] ? pick(t[name]) : '–');
  const ratio = (pick) => (t.ours && t.portkey ? times(pick(t.ours) / pick(t.portkey)) : '–');
  const maxRps = (x) => x.max.requestsPerSec;
  const names = ['direct', 'floor', 'ours', 'portkey'];
  const row = (label, pick, last = '') => `| ${label} | ${names.map((n) => cell(n, pick)).join(' | ')} | ${last} |`;
  const lines = [
    '| non-streaming, load from a separate process | direct | Node floor | ours | Portkey | ours ÷ Portkey |',
    '|---|---|---|---|---|---|',
    row('max req/s (autocannon, 50 connections)', (x) => num(maxRps(x)), ratio(maxRps)),
    row('p50 / p99 at max load (ms, autocannon, whole ms)', (x) => `${x.max.latencyP50Ms} / ${x.max.latencyP99Ms}`),
    row(
      `p50 / p99 at ${rate} req/s (ms)`,
      (x) => `${num(x.fixed.latencyP50Ms, 3)} / ${num(x.fixed.latencyP99Ms, 3)}`,
      `${ratio((x) => x.fixed.latencyP50Ms)} (p50)`,
    ),
    row('errors / non-2xx (max + fixed)', errs),
  ];
  return lines.join('\n');
}

function errs(x) {
  return `${x.max.errors + x.fixed.errors} / ${x.max.non2xx + x.fixed.non2xx}`;
}

function failoverTable(f) {
  const r = f.refuse;
  const h = f.hang;
  return [
    `| failover through ours (baseline: ${ms(f.baselineMs)} per request to a healthy alias) | figure |`,
    '|---|---|',
    `| first target refuses: first request after it died (added) | ${ms(r.firstRequestAddedMs)} (upstream calls: ${r.samples[0].attempts}) |`,
    `| first target refuses: first request, provider unknown to the health cache (median of ${r.unknownCount}, warm code paths) | ${ms(r.unknownAddedMedianMs)} |`,
    `| first target refuses: requests that still called it (of 5 per cycle, ${r.samples.length} cycles) | ${r.samples.map((s) => s.callsToDeadTarget).join(', ')} |`,
    `| first target refuses: once the health cache has it, added (median) | ${ms(r.knownAddedMedianMs)} (upstream calls: ${r.knownAttempts}) |`,
    `| first target hangs: first request (first-byte timeout ${h.firstByteTimeoutMs} ms) | ${ms(h.firstRequestMs, 1)} |`,
    `| first target hangs: requests that waited for the timeout (longest) | ${h.requestsThatWaited} of ${h.sequence.length} (${ms(h.waitedMaxMs, 1)}) |`,
    `| first target hangs: once the breaker is open, added (median) | ${ms(h.knownAddedMedianMs)} (upstream calls: ${h.knownAttempts}) |`,
  ].join('\n');
}

function memoryTable(m) {
  const lines = [
    '| RSS | idle | open streams (max sampled) | after they end: +2 s | settled (lowest within 10 s) | after a forced full GC (diagnosis) | streams completed |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const [name, label] of [
    ['ours', 'ours'],
    ['portkey', 'Portkey'],
  ]) {
    const x = m[name];
    if (x) {
      lines.push(
        `| ${label}, ${x.count} streams | ${mb(x.idleMb)} | ${mb(x.openMb)} | ${mb(x.after2sMb)} | ${mb(x.afterMb)} | ${mb(x.afterGcMb)} | ${x.completed} / ${x.count} |`,
      );
      if (x.heap) {
        lines.push(`| ${label}: V8 heap in use (its /metrics) | ${mb(x.heap.idleMb)} | ${mb(x.heap.openMb)} | | ${mb(x.heap.afterMb)} | ${mb(x.heap.afterGcMb)} | |`);
      }
    }
  }
  return lines.join('\n');
}

function targetsTable(targets) {
  const mark = (met) => (met === null ? 'not measured' : met ? 'met' : '**missed**');
  return [
    '| target | goal | ours, this run | bound, this run | verdict |',
    '|---|---|---|---|---|',
    ...targets.map((t) => `| ${t.name} | ${t.goal} | ${t.value} | ${t.bound ?? '–'} | ${mark(t.met)} |`),
  ].join('\n');
}

export function renderMarkdown(results) {
  const m = results.machine;
  const parts = [
    `## Benchmark results`,
    '',
    `${results.date.slice(0, 16).replace('T', ' ')} UTC · ${m.cpu}, ${m.cores} cores, ${m.memoryGb} GB · ${m.os} · Node ${m.node}${
      results.quick ? ' · **quick run (small sizes)**' : ''
    } · run took ${Math.round(results.durationS)} s`,
    '',
    'Loopback only; one fake OpenAI upstream process; each gateway its own process; ratios within one run are the figures that count.',
    '',
  ];
  if (results.latency) parts.push(latencyTable(results.latency), '');
  for (const api of OTHER_APIS) if (results.latency && results[api.name]) parts.push(otherApiTable(results.latency, api, results[api.name]), '');
  if (results.throughput) parts.push(throughputTable(results.throughput, results.sizes.rate), '');
  if (results.failover) parts.push(failoverTable(results.failover), '');
  if (results.memory) parts.push(memoryTable(results.memory), '');
  parts.push(targetsTable(results.targets), '');
  if (results.notes.length) parts.push(...results.notes.map((n) => `- ${n}`), '');
  return `${parts.join('\n')}`;
}

export function renderTerminal(results) {
  return `\n${renderMarkdown(results)}\nTargets (ratios within this run):\n${verdictLines(results.targets)}\n`;
}
