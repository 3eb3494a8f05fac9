// The saturation scenario's figures (results.saturation, see saturation.mjs) as Markdown: one row per
// config and load level, and a summary a line per config. Written to bench/results/saturation.md and
// copied into docs/performance.md by update-performance-doc.mjs.

const seconds = (ms) => (Number.isFinite(ms) ? `${(ms / 1_000).toFixed(2)} s` : '–');
const percent = (share) => (Number.isFinite(share) ? `${(100 * share).toFixed(0)} %` : '–');

function errorsCell(level) {
  if (level.errors === 0) return '0';
  const kinds = Object.entries(level.errorKinds).map(([kind, n]) => `${n} ${kind}`);
  return `${level.errors} (${kinds.join(', ')})`;
}

function describeSetup(s) {
  const box = s.gpuBox;
  const work = box.prefillMs + (box.tokens - 1) * box.perTokenMs;
  return (
    `GPU box: ${box.slots} slots, FIFO queue, first token after ${box.prefillMs} ms, then ${box.tokens - 1} more tokens at ${box.perTokenMs} ms ` +
    `(${(work / 1_000).toFixed(2)} s a request: ${s.capacityPerS.toFixed(1)} req/s of capacity); cloud: first token after ${s.cloud.prefillMs} ms, ` +
    `no queue. Open-loop Poisson arrivals for ${s.durationS} s a level (seeded: every config gets the same schedule), streaming, ` +
    `each config with its own box, cloud and gateway, side by side; TTFT is the time to the first content delta; ` +
    `a request unanswered after ${s.clientTimeoutMs / 1_000} s is an error. The scenario took ${s.runS.toFixed(0)} s. ` +
    `"Ideal" is what a gateway with no overhead gets from the same box with the config's queue timeout ` +
    `(bench/lib/queue-model.mjs: ${s.gpuBox.slots} slots, FIFO, a request leaves after waiting that long): on the level's own schedule · in the long run (200,000 simulated arrivals at that rate).`
  );
}

export function renderSaturationMarkdown(s, date) {
  const lines = [`### Saturation: a local GPU box that is up but full, a cloud target behind it (${date})`, '', describeSetup(s), ''];
  lines.push('| config | load | requests | TTFT p50 | p95 | p99 | answered by the GPU | ideal | cloud requests | errors |', '|---|---|---|---|---|---|---|---|---|---|');
  for (const c of Object.values(s.configs)) {
    if (c.levels.length === 0) {
      lines.push(`| ${c.label} | not available: ${c.unavailable ?? 'not measured'} | | | | | | | | |`);
      continue;
    }
    for (const l of c.levels) {
      lines.push(`| ${c.label} | ${l.load}× | ${l.requests} | ${seconds(l.ttftMs.p50)} | ${seconds(l.ttftMs.p95)} | ${seconds(l.ttftMs.p99)} | ${percent(l.localShare)} | ${l.ideal === undefined ? '' : `${percent(l.ideal.onThisSchedule)} · ${percent(l.ideal.longRun)}`} | ${l.cloudRequests} | ${errorsCell(l)} |`);
    }
  }
  lines.push('', renderSaturationSummary(s));
  return `${lines.join('\n')}\n`;
}

/** TTFT p95 and the GPU's share per load level, a line per config: the README's table. */
export function renderSaturationSummary(s) {
  const levels = Object.values(s.configs).find((c) => c.levels.length > 0)?.levels.map((l) => l.load) ?? [];
  const lines = [`| TTFT p95 · answered by the GPU | ${levels.map((l) => `${l}×`).join(' | ')} |`, `|---|${levels.map(() => '---|').join('')}`];
  for (const c of Object.values(s.configs)) {
    const cells = levels.map((load) => {
      const l = c.levels.find((x) => x.load === load);
      if (l === undefined) return 'not available';
      return `${seconds(l.ttftMs.p95)} · ${percent(l.localShare)}${l.errors > 0 ? ` · ${l.errors} errors` : ''}`;
    });
    lines.push(`| ${c.label} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}
