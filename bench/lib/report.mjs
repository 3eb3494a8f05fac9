// Turns a results object into the target verdicts, the terminal table and the
// Markdown file. Every figure printed comes from results (latest.json).
const NEAR_IDLE_MB = 30; // "back near idle": within 30 MB of the idle RSS

const ms = (value, digits = 3) => (Number.isFinite(value) ? `${value.toFixed(digits)} ms` : '–');
const num = (value, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : '–');
const times = (value) => (Number.isFinite(value) ? `${value < 0.1 ? value.toPrecision(2) : value.toFixed(2)}×` : '–');
const mb = (value) => (Number.isFinite(value) ? `${value.toFixed(1)} MB` : '–');
const pair = (summary) => (summary ? `${num(summary.median, 3)} / ${num(summary.p99, 3)}` : '–');

export function evaluateTargets(results) {
  const targets = [];
  const lat = results.latency;
  const oursAdded = lat?.nonStream?.ours?.added?.median;
  const portkeyAdded = lat?.nonStream?.portkey?.added?.median;
  const verdict = (ok) => (ok === undefined ? null : Boolean(ok));
  const have = (...values) => values.every(Number.isFinite);
  targets.push({
    name: 'Median added latency, sequential, non-streaming',
    goal: '≤ 0.3 ms',
    value: ms(oursAdded),
    met: verdict(have(oursAdded) ? oursAdded <= 0.3 : undefined),
  });
  targets.push({
    name: 'Added latency vs Portkey (same run)',
    goal: '≤ 1/5 of Portkey’s',
    value: have(oursAdded, portkeyAdded) ? `${ms(oursAdded)} vs ${ms(portkeyAdded)} = ${(oursAdded / portkeyAdded).toFixed(2)}` : '–',
    met: verdict(have(oursAdded, portkeyAdded) ? oursAdded <= portkeyAdded / 5 : undefined),
  });
  const tOurs = results.throughput?.ours?.max?.requestsPerSec;
  const tPortkey = results.throughput?.portkey?.max?.requestsPerSec;
  targets.push({
    name: 'Throughput vs Portkey (max req/s)',
    goal: '≥ 3×',
    value: have(tOurs, tPortkey) ? `${num(tOurs)} vs ${num(tPortkey)} req/s = ${times(tOurs / tPortkey)}` : '–',
    met: verdict(have(tOurs, tPortkey) ? tOurs >= 3 * tPortkey : undefined),
  });
  const ttfb = lat?.streamFirstByte?.ours?.added?.median;
  targets.push({
    name: 'Streaming first-byte overhead (median added)',
    goal: '≤ 0.5 ms',
    value: ms(ttfb),
    met: verdict(have(ttfb) ? ttfb <= 0.5 : undefined),
  });
  const mem = results.memory?.ours;
  targets.push({
    name: `${mem?.count ?? 1000} open streams: RSS, and back near idle after`,
    goal: `< 200 MB; after ≤ idle + ${NEAR_IDLE_MB} MB`,
    value: mem
      ? `${mb(mem.openMb)} open; idle ${mb(mem.idleMb)} → settled ${mb(mem.afterMb)}` +
        (mem.heap ? ` (after a forced GC: RSS ${mb(mem.afterGcMb)}, heap ${mb(mem.heap.afterGcMb)} vs ${mb(mem.heap.idleMb)} idle)` : '')
      : '–',
    met: verdict(mem ? mem.openMb < 200 && mem.afterMb <= mem.idleMb + NEAR_IDLE_MB && mem.completed === mem.count : undefined),
  });
  const shared = results.sharedMode?.nonStreamAddedMs?.median;
  targets.push({
    name: 'Shared mode (MANA_LLM_DATABASE_URL) vs the default: median added latency, sequential, non-streaming',
    goal: '≤ 0.05 ms (no measurable cost)',
    value: ms(shared),
    met: verdict(have(shared) ? shared <= 0.05 : undefined),
  });
  const refuse = results.failover?.refuse;
  targets.push({
    name: 'Failover past a refusing target (first request, before the health cache knows)',
    goal: '≤ 2 ms added',
    value: refuse ? `${ms(refuse.firstRequestAddedMs)} first; median of ${refuse.unknownCount} such requests: ${ms(refuse.unknownAddedMedianMs)}` : '–',
    met: verdict(refuse ? refuse.unknownAddedMedianMs <= 2 : undefined),
  });
  return targets;
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
  return ['| target | goal | this run | verdict |', '|---|---|---|---|', ...targets.map((t) => `| ${t.name} | ${t.goal} | ${t.value} | ${mark(t.met)} |`)].join(
    '\n',
  );
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
  if (results.throughput) parts.push(throughputTable(results.throughput, results.sizes.rate), '');
  if (results.failover) parts.push(failoverTable(results.failover), '');
  if (results.memory) parts.push(memoryTable(results.memory), '');
  parts.push(targetsTable(results.targets), '');
  if (results.notes.length) parts.push(...results.notes.map((n) => `- ${n}`), '');
  return `${parts.join('\n')}`;
}

export function renderTerminal(results) {
  return `\n${renderMarkdown(results)}\n`;
}
