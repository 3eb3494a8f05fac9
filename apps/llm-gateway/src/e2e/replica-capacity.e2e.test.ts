/**
 * A provider's `max_concurrency` is the total of all replicas: three built
 * gateway processes sharing one real PostgreSQL (a throwaway cluster, or
 * MANA_LLM_TEST_DATABASE_URL) in front of one fake GPU box on loopback, which
 * counts the requests it holds at once. Asserted there, at the upstream:
 * - a burst of 30 background requests spread over the three never has more
 *   than 6 in flight at the box (each replica alone would allow 6: 18);
 * - with one replica killed (SIGKILL) and started again under steady traffic,
 *   the box holds at most 4 while the dead one still counts (the others use
 *   less, never more), and never more than 6 + the newcomer's share (2).
 * Bounded: about 15 s of traffic; every process it starts is killed at the end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGpuBox, startTestPostgres, type GpuBox, type TestPostgres } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess } from './harness.js';

const ALIAS = 'mana/fast-text';
const TOTAL = 6; // max_concurrency of the provider, for all replicas together
const SHARE = 2; // floor(6 / 3): a newcomer's share with three replicas alive
const HOLD_MS = 250; // each request holds a slot of the box this long
const BURST = 30;
const LOOPS_PER_REPLICA = 4; // steady traffic: more than a replica's share, so every share is used

let postgres: TestPostgres;
let box: GpuBox;
const replicas = new Map<string, GatewayProcess>();
const started: GatewayProcess[] = [];

function config(): string {
  return (
    // Background requests run 30 at once per replica: only the provider's share limits them here.
    `background_concurrency: 30\n` +
    `providers:\n  gpu: { type: openai, base_url: "${box.url}", api_key_required: false, max_concurrency: ${TOTAL} }\n` +
    aliasesYaml({ [ALIAS]: ['gpu/m'] }, ['gpu/m'])
  );
}

async function startReplica(name: string): Promise<GatewayProcess> {
  const gw = await spawnGateway({ config: config(), env: { MANA_LLM_DATABASE_URL: postgres.url, MANA_LLM_REPLICA_NAME: name } });
  started.push(gw);
  replicas.set(name, gw);
  return gw;
}

beforeAll(async () => {
  [postgres, box] = await Promise.all([startTestPostgres(), startGpuBox({ slots: 100, prefillMs: HOLD_MS, perTokenMs: 0, tokens: 1 })]);
  // One at a time: the first seeds the shared config, the others read it.
  for (const name of ['a', 'b', 'c']) await startReplica(name);
}, 90_000);

afterAll(async () => {
  await Promise.all(started.map((gw) => gw.stop()));
  await box?.close();
  await postgres?.stop();
});

/** One background chat completion; the status, or 0 when the connection failed (its replica was killed). */
async function chat(gw: GatewayProcess): Promise<number> {
  try {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-mana-llm-priority': 'background' },
      body: JSON.stringify({ model: ALIAS, messages: [{ role: 'user', content: 'hi' }] }),
    });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** Epoch ms at which `gw` logged that `count` replicas are alive, after log index `from`. */
async function sawReplicas(gw: GatewayProcess, count: number, from: number, timeoutMs: number): Promise<number> {
  const line = await gw.waitForLog((l) => l.replicas === count && gw.logs.indexOf(l) >= from, timeoutMs);
  return Date.parse(String(line.time));
}

describe(`three replicas share a provider's max_concurrency: ${TOTAL}`, () => {
  it(`a burst of ${BURST} background requests over three replicas never holds more than ${TOTAL} at the upstream`, async () => {
    const gws = [...replicas.values()];
    for (const gw of gws) await gw.waitForLog((l) => l.replicas === 3, 10_000); // each knows the others
    const t0 = performance.now();
    const statuses = await Promise.all(Array.from({ length: BURST }, (_, i) => chat(gws[i % gws.length]!)));
    const ms = performance.now() - t0;
    const { maxInFlight, served } = box.stats();
    console.log(`burst: ${BURST} requests in ${ms.toFixed(0)} ms, at most ${maxInFlight} held at the box at once`);
    expect(statuses).toEqual(Array(BURST).fill(200));
    expect(served).toBe(BURST);
    expect(maxInFlight).toBeLessThanOrEqual(TOTAL);
    // Every replica used its share: the total is reached, not only respected.
    expect(maxInFlight).toBe(TOTAL);
  }, 60_000);

  it(`a replica killed and started again under traffic: at most ${TOTAL - SHARE} while it still counts, never more than ${TOTAL} + ${SHARE}`, async () => {
    let stopping = false;
    const samples: { at: number; inFlight: number }[] = [];
    const sampler = setInterval(() => samples.push({ at: Date.now(), inFlight: box.stats().inFlight }), 2);
    const statuses = new Map<string, number[]>();
    const loop = async (name: string, gw: GatewayProcess): Promise<void> => {
      const mine = statuses.get(name) ?? [];
      statuses.set(name, mine);
      while (!stopping) {
        const status = await chat(gw);
        mine.push(status);
        if (status === 0) return; // its replica is gone
      }
    };
    const traffic = (name: string, gw: GatewayProcess) => Array.from({ length: LOOPS_PER_REPLICA }, () => loop(name, gw));
    const [a, b, c] = ['a', 'b', 'c'].map((n) => replicas.get(n)!);
    const loops = [...traffic('a', a!), ...traffic('b', b!), ...traffic('c', c!)];
    try {
      await new Promise((r) => setTimeout(r, 1_000));
      const [fromA, fromB] = [a!.logs.length, b!.logs.length];
      const killedAt = Date.now();
      c!.child.kill('SIGKILL');
      // The killed replica counts until its row is older than the liveness window (3 s) and a heartbeat reads that.
      const freedA = (await sawReplicas(a!, 2, fromA, 10_000)) - killedAt;
      const freedB = (await sawReplicas(b!, 2, fromB, 10_000)) - killedAt;
      const freedAt = killedAt + Math.min(freedA, freedB);
      console.log(`killed replica's share freed after ${freedA} ms (a), ${freedB} ms (b)`);
      await new Promise((r) => setTimeout(r, 1_000)); // a and b at 3 each
      const [againA, againB] = [a!.logs.length, b!.logs.length];
      const restartAt = Date.now();
      const c2 = await startReplica('c');
      const listening = Date.parse(String(c2.logs.find((l) => l.msg === 'listening')?.time ?? c2.logs.at(-1)?.time));
      loops.push(...traffic('c2', c2));
      const joinA = (await sawReplicas(a!, 3, againA, 10_000)) - listening;
      const joinB = (await sawReplicas(b!, 3, againB, 10_000)) - listening;
      console.log(`restarted replica listening ${listening - restartAt} ms after its spawn; a and b counted it ${joinA} / ${joinB} ms from its listening line (negative: before it)`);
      await new Promise((r) => setTimeout(r, 2_000));
      stopping = true;
      await Promise.all(loops);

      const { maxInFlight } = box.stats();
      // While the dead replica still counted (after its own requests were cut, 200 ms on): a and b with 2 each.
      const whileCounted = samples.filter((s) => s.at > killedAt + 200 && s.at < freedAt - 50).map((s) => s.inFlight);
      const afterJoin = samples.filter((s) => s.at > listening + 1_000).map((s) => s.inFlight);
      console.log(
        `at the box: at most ${Math.max(...whileCounted)} while the killed replica still counted (${whileCounted.length} samples), ` +
          `${Math.max(...afterJoin)} from 1 s after the restart, ${maxInFlight} over the whole run; ` +
          `answered: ${[...statuses].map(([n, s]) => `${n} ${s.filter((x) => x === 200).length}/${s.length}`).join(', ')}`,
      );
      expect(maxInFlight).toBeLessThanOrEqual(TOTAL + SHARE);
      expect(whileCounted.length).toBeGreaterThan(100);
      expect(Math.max(...whileCounted)).toBeLessThanOrEqual(TOTAL - SHARE);
      expect(Math.max(...afterJoin)).toBeLessThanOrEqual(TOTAL);
      // Freed after the window, never before it (the row's last heartbeat was at most 1 s before the kill).
      expect(Math.min(freedA, freedB)).toBeGreaterThanOrEqual(1_900);
      expect(Math.max(freedA, freedB)).toBeLessThan(8_000);
      // Replicas that were not killed answered everything (background requests wait for a slot).
      for (const name of ['a', 'b', 'c2']) expect(statuses.get(name)!.every((s) => s === 200)).toBe(true);
      expect(statuses.get('c2')!.length).toBeGreaterThan(0);
    } finally {
      stopping = true;
      clearInterval(sampler);
      await Promise.all(loops);
    }
  }, 60_000);
});
