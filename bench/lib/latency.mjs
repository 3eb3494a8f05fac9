// Added latency, sequential: interleaved rounds, one request at a time.
import { median, summarize } from './stats.mjs';

/**
 * For each round and each client (order rotated every round), `perRound`
 * sequential requests; the round's figure is the median of those. Returns per
 * client the per-round medians of time to first byte and to last byte.
 */
export async function interleavedRounds(clients, { rounds, perRound, warmup, stream }) {
  for (const client of clients) {
    for (let i = 0; i < warmup; i += 1) await expectOk(client, stream);
  }
  const perClient = new Map(clients.map((client) => [client.name, { ttfb: [], total: [] }]));
  for (let round = 0; round < rounds; round += 1) {
    const order = clients.map((_, i) => clients[(i + round) % clients.length]);
    for (const client of order) {
      const ttfb = [];
      const total = [];
      for (let i = 0; i < perRound; i += 1) {
        const result = await expectOk(client, stream);
        ttfb.push(result.ttfbMs);
        total.push(result.totalMs);
      }
      perClient.get(client.name).ttfb.push(median(ttfb));
      perClient.get(client.name).total.push(median(total));
    }
  }
  return perClient;
}

async function expectOk(client, stream) {
  const result = await client.chat({ stream, keepBody: stream });
  if (result.status !== 200) throw new Error(`${client.name}: status ${result.status}`);
  if (stream && !result.body.includes('[DONE]')) throw new Error(`${client.name}: stream without [DONE]`);
  return result;
}

/**
 * Absolute figures per client and added latency of each non-baseline client:
 * per round (client median − baseline median of the same round), then median
 * and p99 over rounds.
 */
export function addedLatency(perClient, baseline, metric) {
  const base = perClient.get(baseline)[metric];
  const out = {};
  for (const [name, figures] of perClient) {
    const entry = { absolute: summarize(figures[metric]) };
    if (name !== baseline) entry.added = summarize(figures[metric].map((value, i) => value - base[i]));
    out[name] = entry;
  }
  return out;
}
