// CPU per request of the usage store's two halves, on an idle machine, without
// a gateway: the request thread's copy of a record into a column block
// (`recordBatch`: what `BatchWriter.record` does per request) and the writer's
// `UsageStore.write` of 4,000-record batches into a SQLite file (rows, their
// indexes, the rollups). Both on this one thread, timed with
// `process.cpuUsage()`; the median of --rounds rounds.
//
//   node bench/usage-writer.mjs [--requests=200000] [--rounds=5] [--store=DIR]
//
// --store: another build's `dist/` of @mana/llm-usage-store (an A/B of two
// builds: copy the "before" build's dist into the package, e.g. under
// packages/llm-usage-store/.tmp/, so that its imports resolve). Needs the
// built store (`pnpm --filter @mana/llm-usage-store build`).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './lib/procs.mjs';
import { lcg, makeRecord } from './lib/usage-records.mjs';

const argv = process.argv.slice(2);
const option = (name, fallback) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const REQUESTS = Number(option('requests', '200000'));
const ROUNDS = Number(option('rounds', '5'));
const STORE = path.resolve(option('store', path.join(repoRoot, 'packages/llm-usage-store/dist')));
const BATCH = 4_000; // the batch writer's DEFAULT_MAX_BATCH

const { UsageStore, recordBatch } = await import(path.join(STORE, 'index.js'));

const cpuUs = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** One round: a fresh SQLite file, REQUESTS records in batches of BATCH, the first batch a warm-up. */
async function round(seed) {
  const random = lcg(seed);
  const start = Date.now();
  const batches = [];
  for (let done = 0; done < REQUESTS + BATCH; done += BATCH) {
    const batch = [];
    for (let i = 0; i < BATCH; i++) {
      const record = makeRecord(random, start);
      record.time = start + done + i; // a request a millisecond, in time order, as the gateway hands them in
      batch.push(record);
    }
    batches.push(batch);
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mana-usage-writer-'));
  const store = new UsageStore({ location: { kind: 'sqlite', file: path.join(dir, 'usage.sqlite') }, role: 'writes' });
  try {
    await store.write(recordBatch(batches[0]));
    let blockUs = 0;
    let writeUs = 0;
    for (const batch of batches.slice(1)) {
      const beforeBlock = cpuUs();
      const block = recordBatch(batch);
      const beforeWrite = cpuUs();
      await store.write(block);
      writeUs += cpuUs() - beforeWrite;
      blockUs += beforeWrite - beforeBlock;
    }
    return { block: blockUs / REQUESTS, write: writeUs / REQUESTS };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const rounds = [];
for (let r = 0; r < ROUNDS; r++) {
  rounds.push(await round(42 + r));
  const last = rounds.at(-1);
  process.stderr.write(`[usage-writer] round ${r + 1}: block ${last.block.toFixed(2)} µs, write ${last.write.toFixed(2)} µs per request\n`);
}
const show = (key) => `${median(rounds.map((r) => r[key])).toFixed(2)} µs (${Math.min(...rounds.map((r) => r[key])).toFixed(2)}–${Math.max(...rounds.map((r) => r[key])).toFixed(2)})`;
process.stdout.write(
  `${path.relative(repoRoot, STORE)}: ${REQUESTS.toLocaleString('en')} requests × ${ROUNDS} rounds, CPU per request (median, range):\n` +
    `  request thread, record into block: ${show('block')}\n` +
    `  writer, UsageStore.write (SQLite): ${show('write')}\n`,
);
