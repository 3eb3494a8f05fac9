// CPU per request of the usage store's two halves, on an idle machine, without
// a gateway: the request thread's copy of a record into a column block
// (`recordBatch`: what `BatchWriter.record` does per request) and the writer's
// `UsageStore.write` of 4,000-record batches into a SQLite file (rows, their
// indexes, the rollups). Both on this one thread, timed with
// `process.cpuUsage()`; the median of --rounds rounds.
//
//   node bench/usage-writer.mjs [--requests=200000] [--rounds=5] [--store=DIR[,DIR…]] [--transport]
//
// --transport: also the way to the writer thread, both halves, against the
// plain alternative (lib/plain-usage-rows.mjs): block = `recordBatch` and its
// structured clone on the request thread, its clone read back and every row's
// cells read (`BlockReader.read`) on the writer's; plain = the records' clone
// on the request thread, and read back with each row built by a loop over
// REQUEST_COLUMNS on the writer's. The SQLite insert after that is the same
// for both, so it is left out.
//
// Issue #38 asked to replace the block by plain records unless it is worth
// more than 1 µs of CPU per request at max load. It is, so it stays: on this
// 2-core machine, shared and loaded (2026-12-05, 200,000 requests × 5 rounds,
// medians), block 1.86 µs on the request thread + 2.42 µs on the writer's,
// plain records 3.64 µs + 16.71 µs. The block saves 1.8 µs on the request
// thread and 14.3 µs on the writer's, about 16 µs of CPU per request in all.
// The plain way's cost is mostly the clone itself, not the loop: in a split
// run, reading the clone back alone took 7.3 µs, more than the block's whole
// writer side.
//
// --store: the `dist/` of @mana/llm-usage-store builds to measure (default this
// checkout's). With several (an A/B of two builds, e.g. this one and
// `/path/to/other-checkout/packages/llm-usage-store/dist`, whose imports resolve
// in its own checkout), their rounds alternate in this one run, the order
// flipping every round, so a slow minute of the machine falls on both; the
// result adds each build's median ratio to the first. Needs the built stores
// (`pnpm --filter @mana/llm-usage-store build`).
import { mkdtempSync, rmSync } from 'node:fs';
import v8 from 'node:v8';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './lib/procs.mjs';
import { plainRow } from './lib/plain-usage-rows.mjs';
import { lcg, makeRecord } from './lib/usage-records.mjs';
import { flag, option } from './lib/options.mjs';

const REQUESTS = Number(option('requests', '200000'));
const ROUNDS = Number(option('rounds', '5'));
const STORES = option('store', path.join(repoRoot, 'packages/llm-usage-store/dist'))
  .split(',')
  .map((dir) => path.resolve(dir));
const BATCH = 4_000; // the batch writer's DEFAULT_MAX_BATCH
const TRANSPORT = flag('transport');

const builds = await Promise.all(STORES.map(async (dir) => ({ dir, ...(await import(path.join(dir, 'index.js'))) })));

const cpuUs = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** REQUESTS records in batches of BATCH, plus a first batch for a warm-up. */
function makeBatches(seed) {
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
  return batches;
}

/** One round: a fresh SQLite file, REQUESTS records in batches of BATCH, the first batch a warm-up. */
async function round({ UsageStore, recordBatch }, seed) {
  const batches = makeBatches(seed);
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

const rounds = builds.map(() => []);
for (let r = 0; r < ROUNDS; r++) {
  const order = builds.map((_, i) => i);
  if (r % 2 === 1) order.reverse();
  for (const i of order) {
    const result = await round(builds[i], 42 + r);
    rounds[i].push(result);
    process.stderr.write(`[usage-writer] ${path.relative(repoRoot, builds[i].dir)} round ${r + 1}: block ${result.block.toFixed(2)} µs, write ${result.write.toFixed(2)} µs per request\n`);
  }
}
const show = (of, key) => `${median(of.map((r) => r[key])).toFixed(2)} µs (${Math.min(...of.map((r) => r[key])).toFixed(2)}–${Math.max(...of.map((r) => r[key])).toFixed(2)})`;
/** The median over rounds of this build's figure ÷ the first build's in the same round. */
const ratio = (i, key) => median(rounds[i].map((r, n) => r[key] / rounds[0][n][key])).toFixed(3);
for (const [i, build] of builds.entries()) {
  const versus = i === 0 ? '' : ` (× ${ratio(i, 'block')} of the first build's)`;
  const versusWrite = i === 0 ? '' : ` (× ${ratio(i, 'write')} of the first build's)`;
  process.stdout.write(
    `${path.relative(repoRoot, build.dir)}: ${REQUESTS.toLocaleString('en')} requests × ${ROUNDS} rounds, CPU per request (median, range):\n` +
      `  request thread, record into block: ${show(rounds[i], 'block')}${versus}\n` +
      `  writer, UsageStore.write (SQLite): ${show(rounds[i], 'write')}${versusWrite}\n`,
  );
}

/**
 * --transport: one round of both ways to the writer thread (see the header), on
 * the first build; the first batch a warm-up. Both ways run on the same batches,
 * their order flipping every round.
 */
async function transportRound({ dir, recordBatch, REQUEST_COLUMNS, rowId }, seed, r) {
  const { BlockReader } = await import(path.join(dir, 'record-block.js'));
  const batches = makeBatches(seed);
  const values = [];
  const us = { blockSend: 0, blockWriter: 0, plainSend: 0, plainWriter: 0 };
  const ways = {
    block(batch) {
      const t0 = cpuUs();
      const wire = v8.serialize(recordBatch(batch).block);
      const t1 = cpuUs();
      const block = v8.deserialize(wire);
      const reader = new BlockReader(block);
      for (let i = 0; i < block.count; i++) reader.read(i, values, 0);
      return [t1 - t0, cpuUs() - t1];
    },
    plain(batch) {
      const t0 = cpuUs();
      const wire = v8.serialize(batch);
      const t1 = cpuUs();
      const records = v8.deserialize(wire);
      for (const record of records) plainRow(REQUEST_COLUMNS, record, rowId, values, 0);
      return [t1 - t0, cpuUs() - t1];
    },
  };
  for (const way of r % 2 === 0 ? ['block', 'plain'] : ['plain', 'block']) {
    for (const [n, batch] of batches.entries()) {
      const [send, writer] = ways[way](batch);
      if (n === 0) continue;
      us[`${way}Send`] += send;
      us[`${way}Writer`] += writer;
    }
  }
  return Object.fromEntries(Object.entries(us).map(([key, total]) => [key, total / REQUESTS]));
}

if (TRANSPORT) {
  const results = [];
  for (let r = 0; r < ROUNDS; r++) results.push(await transportRound(builds[0], 42 + r, r));
  process.stdout.write(
    `way to the writer thread, ${REQUESTS.toLocaleString('en')} requests × ${ROUNDS} rounds, CPU per request (median, range):\n` +
      `  block: request thread ${show(results, 'blockSend')}, writer ${show(results, 'blockWriter')}\n` +
      `  plain records: request thread ${show(results, 'plainSend')}, writer ${show(results, 'plainWriter')}\n`,
  );
}
