// Usage store query answers over a million stored requests (issue: "well under
// 100 ms"). Fills a fresh store (SQLite file, and PostgreSQL when asked) with
// requests spread evenly over the last 30 days, written oldest first as the gateway writes them — 10 % rescued by failover, 2 % failed —
// then times each query of the usage API: median and max of repeated runs.
//
//   node bench/usage-store.mjs [--requests=1000000] [--engines=sqlite,postgres] [--runs=15] [--out=FILE]
//
// Needs the built store (`pnpm --filter @mana/llm-usage-store build`); PostgreSQL
// comes from MANA_LLM_TEST_DATABASE_URL or a throwaway cluster (llm-testkit).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './lib/procs.mjs';
import { lcg, makeRecord } from './lib/usage-records.mjs';
import { option } from './lib/options.mjs';

const REQUESTS = Number(option('requests', '1000000'));
const ENGINES = option('engines', 'sqlite').split(',');
const RUNS = Number(option('runs', '15'));
const OUT = option('out', undefined);
const DAY = 86_400_000;
const log = (line) => process.stderr.write(`[usage-bench] ${line}\n`);

const { UsageStore, recordBatch } = await import(path.join(repoRoot, 'packages/llm-usage-store/dist/index.js'));

async function fill(store, now) {
  const random = lcg(42);
  const started = performance.now();
  const BATCH = 5_000;
  // Oldest first, as the gateway writes them: records arrive in time order.
  const step = (30 * DAY) / REQUESTS;
  for (let done = 0; done < REQUESTS; done += BATCH) {
    const batch = [];
    for (let i = 0; i < Math.min(BATCH, REQUESTS - done); i++) {
      const record = makeRecord(random, now);
      record.time = Math.floor(now - 30 * DAY + (done + i) * step);
      batch.push(record);
    }
    await store.write(recordBatch(batch));
    if ((done / BATCH) % 40 === 0) log(`  ${done.toLocaleString('en')} written`);
  }
  return (performance.now() - started) / 1000;
}

async function time(run) {
  const samples = [];
  await run(); // warm-up
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await run();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return { median: samples[Math.floor(samples.length / 2)], max: samples.at(-1) };
}

async function queries(store, now) {
  const deepCursor = await (async () => {
    let cursor;
    for (let i = 0; i < 50; i++) cursor = (await store.requests({ limit: 100, cursor })).nextCursor ?? undefined;
    return cursor;
  })();
  return {
    'requests: newest page (50)': () => store.requests({}),
    'requests: page 51 by cursor (100)': () => store.requests({ limit: 100, cursor: deepCursor }),
    'requests: alias filter': () => store.requests({ alias: 'mana/long-form' }),
    'requests: target + failed_over': () => store.requests({ target: 'ollama/gemma3:4b', failedOver: true }),
    'requests: status 502, last 7 days': () => store.requests({ status: 502, since: now - 7 * DAY }),
    'errors: newest page (50)': () => store.errors({}),
    'summary by alias, last 24 h (default window)': () => store.summary({ groupBy: 'alias', since: now - DAY }),
    'summary by target, last 24 h': () => store.summary({ groupBy: 'target', since: now - DAY }),
    'summary by provider, last 24 h': () => store.summary({ groupBy: 'provider', since: now - DAY }),
    'summary by alias, last 7 days': () => store.summary({ groupBy: 'alias', since: now - 7 * DAY }),
    'summary by target, last 7 days': () => store.summary({ groupBy: 'target', since: now - 7 * DAY }),
    'summary by alias, all 30 days': () => store.summary({ groupBy: 'alias' }),
    'summary by alias, 30 days to now': () => store.summary({ groupBy: 'alias', since: now - 30 * DAY, until: now }),
    'summary by provider, all 30 days': () => store.summary({ groupBy: 'provider' }),
  };
}

const results = [];
for (const engine of ENGINES) {
  let location;
  let cleanup;
  if (engine === 'sqlite') {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mana-usage-bench-'));
    location = { kind: 'sqlite', file: path.join(dir, 'usage.sqlite') };
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  } else {
    const { startTestPostgres } = await import(path.join(repoRoot, 'packages/llm-testkit/dist/index.js'));
    const pg = await startTestPostgres();
    location = { kind: 'postgres', url: pg.url };
    cleanup = () => pg.stop();
  }
  const store = new UsageStore({ location });
  try {
    const now = Date.now();
    log(`${engine}: writing ${REQUESTS.toLocaleString('en')} requests…`);
    const fillSeconds = await fill(store, now);
    await store.refreshStatistics(); // what the background housekeeping does hourly
    log(`${engine}: written in ${fillSeconds.toFixed(1)} s (${Math.round(REQUESTS / fillSeconds).toLocaleString('en')} requests/s)`);
    for (const [name, run] of Object.entries(await queries(store, now))) {
      const { median, max } = await time(run);
      results.push({ engine, query: name, medianMs: Number(median.toFixed(2)), maxMs: Number(max.toFixed(2)) });
      log(`${engine}: ${name}: median ${median.toFixed(2)} ms, max ${max.toFixed(2)} ms`);
    }
    results.push({ engine, query: 'write throughput (requests/s, 5 000 per batch)', medianMs: null, maxMs: null, rate: Math.round(REQUESTS / fillSeconds) });
  } finally {
    await store.close();
    await cleanup();
  }
}

const lines = [
  `Usage store queries over ${REQUESTS.toLocaleString('en')} stored requests (${RUNS} runs each, ${os.cpus().length} cores, Node ${process.version})`,
  '',
  '| engine | query | median ms | max ms |',
  '|---|---|---:|---:|',
  ...results.map((r) => (r.rate === undefined ? `| ${r.engine} | ${r.query} | ${r.medianMs} | ${r.maxMs} |` : `| ${r.engine} | ${r.query} | ${r.rate.toLocaleString('en')} | |`)),
];
process.stdout.write(`${lines.join('\n')}\n`);
if (OUT !== undefined) writeFileSync(OUT, `${lines.join('\n')}\n`);
