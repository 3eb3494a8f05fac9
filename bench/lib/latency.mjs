// Added latency, sequential: interleaved rounds, one request at a time.
import { setTimeout as sleep } from 'node:timers/promises';
import { median, summarize } from './stats.mjs';

const BLOCK_GAP_MS = 100; // let the previous target's deferred work (logging, GC) finish
const BLOCK_WARMUP = 5; // unmeasured requests at the start of each block (caches, pooled socket)

/**
 * For each round and each client (in a random order every round), `perRound`
 * sequential requests; the round's figure is the median of those. Each block
 * starts after a short pause and a few unmeasured requests, so that one
 * target's deferred work never lands in the next target's measurements.
 * Returns per client the per-round medians of time to first byte and to last byte.
 */
export async function interleavedRounds(allClients, { rounds, perRound, warmup, stream, embeddings = false }) {
  const expectOk = embeddings ? expectVectors : expectCompletion;
  // Embeddings have no Messages or Responses counterpart: those clients sit these rounds out.
  const clients = embeddings ? allClients.filter((c) => c.api === 'chat_completions') : allClients;
  for (const client of clients) {
    for (let i = 0; i < warmup; i += 1) await expectOk(client, stream);
  }
  const perClient = new Map(clients.map((client) => [client.name, { ttfb: [], total: [] }]));
  for (let round = 0; round < rounds; round += 1) {
    const order = shuffle(clients);
    for (const client of order) {
      await sleep(BLOCK_GAP_MS);
      for (let i = 0; i < BLOCK_WARMUP; i += 1) await expectOk(client, stream);
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

function shuffle(list) {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** An embeddings request (`embeddings: true`): 200 with one vector, checked on the warmup and every measured call alike. */
async function expectVectors(client) {
  const result = await client.embed({ keepBody: true });
  if (result.status !== 200) throw new Error(`${client.name}: embeddings status ${result.status}`);
  if (!result.body.includes('"embedding"')) throw new Error(`${client.name}: embeddings answer without a vector`);
  return result;
}

/** A chat request: 200, and with `stream` the stream's end marker; checked on the warmup and every measured call alike. */
export async function expectCompletion(client, stream) {
  const result = await client.chat({ stream, keepBody: stream });
  if (result.status !== 200) throw new Error(`${client.name}: status ${result.status}`);
  if (stream && !result.body.includes(client.streamEnd)) throw new Error(`${client.name}: stream without its end (${client.streamEnd})`);
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

/**
 * Two targets alone, in long interleaved blocks (`sizes`: rounds × perRound a
 * side): `client`'s added latency over `baseline`, paired per round —
 * non-streaming, the stream's first and last byte and, with `embeddings`,
 * an embeddings call. For the rows whose bound (0.01 or 0.05 ms) is finer
 * than the shared rounds resolve. Long blocks also keep each target's
 * deferred work (a batch exported 200 ms after its first span, a usage
 * flush) inside its own measurements, as under steady traffic, instead of
 * in whichever target's block comes next.
 */
export async function pairedAddedLatency(baseline, client, sizes, { embeddings = false } = {}) {
  const pair = [baseline, client];
  const plain = await interleavedRounds(pair, { ...sizes, stream: false });
  const streamed = await interleavedRounds(pair, { ...sizes, stream: true });
  const figures = {
    rounds: sizes.rounds,
    perRound: sizes.perRound,
    nonStreamAddedMs: addedLatency(plain, baseline.name, 'total')[client.name].added,
    streamFirstByteAddedMs: addedLatency(streamed, baseline.name, 'ttfb')[client.name].added,
    streamLastByteAddedMs: addedLatency(streamed, baseline.name, 'total')[client.name].added,
  };
  if (embeddings) {
    const embedded = await interleavedRounds(pair, { ...sizes, embeddings: true });
    figures.embeddingsAddedMs = addedLatency(embedded, baseline.name, 'total')[client.name].added;
  }
  return figures;
}

/** A paired row's figures (pairedAddedLatency) as the notes give them. */
export function describePaired(figures) {
  const parts = [
    `${figures.nonStreamAddedMs.median.toFixed(3)} ms non-streaming`,
    `${figures.streamFirstByteAddedMs.median.toFixed(3)} ms streaming first byte`,
    `${figures.streamLastByteAddedMs.median.toFixed(3)} ms last byte`,
  ];
  if (figures.embeddingsAddedMs) parts.push(`${figures.embeddingsAddedMs.median.toFixed(3)} ms embeddings`);
  const cpu = figures.cpuPerRequest;
  const cpuPart = cpu
    ? `; gateway CPU per request (sequential, non-streaming, all threads) ${cpu.added.median >= 0 ? '+' : ''}${cpu.added.median.toFixed(1)} µs ` +
      `over ${cpu.baselineUs.median.toFixed(1)} µs (median of ${cpu.added.rounds} segments × ${cpu.perSegment} requests a side, in chunks of ${cpu.chunk})`
    : '';
  return `median added ${parts.join(', ')} (paired blocks, ${figures.rounds} rounds × ${figures.perRound})${cpuPart}`;
}
