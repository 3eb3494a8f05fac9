// Gateway CPU per request of two gateways, side by side, finely interleaved.
//
// Max-load rounds read a gateway's CPU per request within about ±15 µs a
// round on this shared 2-core machine, and blocks of 2,000 sequential requests
// a side within tens of µs: the machine's speed drifts over seconds. Here the
// two take turns every `chunk` requests (a few ms), so a drift falls on both
// sides alike, and each side's CPU is the scheduler's own count for its whole
// process over a segment (all threads: deferred work such as logging and
// usage writes is counted wherever it runs).
import { expectCompletion } from './latency.mjs';
import { cpuNs } from './procs.mjs';
import { summarize } from './stats.mjs';

/**
 * `client`'s CPU per request over `baseline`'s, both clients of gateways this
 * run started (`pid`): per segment, `perSegment` non-streaming requests a side
 * taken in turns of `chunk`; the median and p99 over segments of the
 * difference, and each side's own figure.
 */
export async function pairedCpuPerRequest(baseline, client, { segments, perSegment, chunk }) {
  const added = [];
  const baselineUs = [];
  const clientUs = [];
  for (let segment = 0; segment < segments; segment += 1) {
    const before = [cpuNs(baseline.pid), cpuNs(client.pid)];
    for (let turn = 0; turn < (2 * perSegment) / chunk; turn += 1) {
      const side = (turn + segment) % 2 === 0 ? baseline : client;
      for (let i = 0; i < chunk; i += 1) await expectCompletion(side, false);
    }
    const [baseUs, clientUsed] = [cpuNs(baseline.pid) - before[0], cpuNs(client.pid) - before[1]].map((ns) => Number(ns) / 1_000 / perSegment);
    baselineUs.push(baseUs);
    clientUs.push(clientUsed);
    added.push(clientUsed - baseUs);
  }
  return { added: summarize(added), baselineUs: summarize(baselineUs), clientUs: summarize(clientUs), perSegment, chunk };
}
