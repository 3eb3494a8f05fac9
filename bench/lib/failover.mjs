// Failover cost through our gateway: what a request pays when the first target
// of its alias refuses connections or hangs, before and after the health cache
// knows. Each first target starts healthy (its own upstream process, so the
// startup probe sees it up) and is then made to fail, the way a provider dies
// in production.
import { median } from './stats.mjs';

async function timed(client, model) {
  const result = await client.chat({ modelOverride: model });
  if (result.status !== 200) throw new Error(`failover ${model}: status ${result.status}`);
  return { ms: result.totalMs, attempts: Number(result.headers['x-mana-llm-attempts'] ?? Number.NaN) };
}

async function medianOf(client, model, count) {
  const values = [];
  for (let i = 0; i < count; i += 1) values.push((await timed(client, model)).ms);
  return median(values);
}

/**
 * @param client     a client for our gateway
 * @param aliases    { healthy, refusing, hanging } alias names
 * @param upstreams  { refusing, hanging } the first targets' own upstreams
 * @param options    { firstByteTimeoutMs, steady, renameRefusing(n) }
 *   renameRefusing(n) reloads the gateway with the refusing provider under a
 *   new name: a provider the health cache has never seen, so the next request
 *   is again one that "does not know yet" (with warm code paths this time).
 */
export async function failoverCost(client, aliases, upstreams, options) {
  const { firstByteTimeoutMs, steady, renameRefusing, cycles = 9 } = options;
  // Warm every path while all targets are up.
  for (const alias of Object.values(aliases)) await medianOf(client, alias, 50);
  const baselineMs = await medianOf(client, aliases.healthy, steady);

  // 1. The first target starts refusing connections (its process is gone).
  await upstreams.refusing.stop();
  const refuse = { samples: [] };
  for (let cycle = 0; cycle < cycles; cycle += 1) {
    if (cycle > 0) await renameRefusing(cycle);
    const cycleBaseline = await medianOf(client, aliases.healthy, 20);
    const first = await timed(client, aliases.refusing);
    const next = [];
    for (let i = 0; i < 4; i += 1) next.push(await timed(client, aliases.refusing));
    refuse.samples.push({
      addedMs: first.ms - cycleBaseline,
      attempts: first.attempts,
      callsToDeadTarget: [first, ...next].filter((s) => s.attempts > 1).length,
    });
  }
  refuse.firstRequestAddedMs = refuse.samples[0].addedMs;
  const paid = refuse.samples.filter((s) => s.attempts > 1);
  refuse.unknownAddedMedianMs = median(paid.map((s) => s.addedMs));
  refuse.unknownCount = paid.length;
  const afterRefuse = [];
  for (let i = 0; i < steady; i += 1) afterRefuse.push(await timed(client, aliases.refusing));
  refuse.knownAddedMedianMs = median(afterRefuse.map((s) => s.ms)) - baselineMs;
  refuse.knownAttempts = median(afterRefuse.map((s) => s.attempts));

  // 2. The first target starts hanging (accepts, never answers).
  await upstreams.hanging.hang();
  const hang = { firstByteTimeoutMs, sequence: [] };
  for (let i = 0; i < 6; i += 1) {
    const sample = await timed(client, aliases.hanging);
    hang.sequence.push({ ms: sample.ms, attempts: sample.attempts });
  }
  hang.firstRequestMs = hang.sequence[0].ms;
  hang.requestsThatWaited = hang.sequence.filter((s) => s.attempts > 1).length;
  hang.waitedMaxMs = Math.max(...hang.sequence.filter((s) => s.attempts > 1).map((s) => s.ms));
  const afterHang = [];
  for (let i = 0; i < steady; i += 1) afterHang.push(await timed(client, aliases.hanging));
  hang.knownAddedMedianMs = median(afterHang.map((s) => s.ms)) - baselineMs;
  hang.knownAttempts = median(afterHang.map((s) => s.attempts));

  return { baselineMs, refuse, hang };
}
