/**
 * Reload under load: SIGHUP every 100 ms, alternating a valid and an invalid
 * config file, while requests (half of them streams that span several reloads)
 * keep flowing. Zero requests may fail because of a reload; the reload metric
 * counts both results; the last valid file is the one in effect.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import {
  CLIENT_KEY,
  PROVIDER_KEY_VARS,
  SIZES,
  chat,
  configYaml,
  finishSuite,
  request,
  sleep,
  startGateway,
  streamEnding,
  type GatewayProcess,
} from './harness.js';

const RELOAD_EVERY_MS = 100;
const CONCURRENCY = 50;

let gateway: GatewayProcess;
let alpha: FakeUpstream;
let beta: FakeUpstream;

function validConfig(variant: number): string {
  const chain = variant % 2 === 0 ? ['alpha/m', 'beta/m'] : ['beta/m', 'alpha/m'];
  return configYaml({
    providers: {
      alpha: { url: alpha.baseUrl, key: PROVIDER_KEY_VARS[0] },
      beta: { url: beta.baseUrl, key: PROVIDER_KEY_VARS[1] },
    },
    aliases: { 'mana/fast-text': chain, 'mana/long-form': [chain[1]!, chain[0]!] },
    defaultChain: chain,
  }).replace('mana/fast-text (reliability)', `mana/fast-text (reliability, variant ${variant})`);
}

/** Broken in different ways: syntax, an unknown provider, a missing required alias, nothing at all. */
function invalidConfig(variant: number): string {
  const valid = validConfig(0);
  switch (variant % 4) {
    case 0:
      return `${valid}\n  broken: [unclosed\n`;
    case 1:
      return valid.replace('chain: [alpha/m, beta/m]', 'chain: [nowhere/m]');
    case 2:
      return valid.replace(/ {2}mana\/vision:\n.*\n.*\n/, '');
    default:
      return '';
  }
}

beforeAll(async () => {
  alpha = await startFakeOpenAI({ name: 'alpha', default: { kind: 'answer', chunks: 5, chunkIntervalMs: 10 }, record: false });
  beta = await startFakeOpenAI({ name: 'beta', default: { kind: 'answer', chunks: 5, chunkIntervalMs: 10 }, record: false });
  gateway = await startGateway({ config: validConfig(0) });
});

afterAll(() => finishSuite(gateway, [alpha, beta]));

describe('reload under load', () => {
  it(`SIGHUP every ${RELOAD_EVERY_MS} ms (valid and invalid files alternating) during ${SIZES.reloadRequests} requests: zero failures`, async () => {
    const before = await gateway.metrics();
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    let done = false;
    let signals = 0;
    let invalidSignals = 0;
    const reloader = (async () => {
      const deadline = Date.now() + 120_000;
      for (let i = 0; !done && Date.now() < deadline; i += 1) {
        const valid = i % 2 === 0;
        await gateway.writeConfig(valid ? validConfig(i / 2) : invalidConfig((i - 1) / 2));
        gateway.child.kill('SIGHUP');
        signals += 1;
        if (!valid) invalidSignals += 1;
        await sleep(RELOAD_EVERY_MS);
      }
    })();

    const failures: string[] = [];
    let ok = 0;
    let next = 0;
    const worker = async () => {
      while (next < SIZES.reloadRequests) {
        const i = next++;
        const stream = i % 2 === 0;
        try {
          const r = await chat(gateway.url, i % 3 === 0 ? 'mana/long-form' : 'mana/fast-text', { stream, agent, timeoutMs: 10_000 });
          if (r.status !== 200) failures.push(`#${i}: ${r.status} ${r.body.slice(0, 200)}`);
          else if (stream && streamEnding(r) !== 'done') failures.push(`#${i}: stream ended ${streamEnding(r)}: ${r.body.slice(-200)}`);
          else ok += 1;
        } catch (error) {
          failures.push(`#${i}: ${(error as Error).message}`);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    done = true;
    await reloader;
    agent.destroy();

    expect(failures.slice(0, 10), `${failures.length} failures`).toEqual([]);
    expect(ok).toBe(SIZES.reloadRequests);
    expect(signals).toBeGreaterThanOrEqual(10);

    // Every signal is one reload (the gateway queues them, never folds them);
    // both results happened. Which file a queued reload reads depends on when
    // it runs (the next write may already be in place), so the split between
    // success and failure is not fixed under load.
    const reloads = (m: Awaited<ReturnType<typeof gateway.metrics>>, result: string) =>
      m.sum('mana_llm_config_reload_total', { result }) - before.sum('mana_llm_config_reload_total', { result });
    let after = await gateway.metrics();
    const deadline = Date.now() + 5_000;
    while (reloads(after, 'success') + reloads(after, 'failure') < signals && Date.now() < deadline) {
      await sleep(100);
      after = await gateway.metrics();
    }
    expect(reloads(after, 'success') + reloads(after, 'failure')).toBe(signals);
    expect(reloads(after, 'success')).toBeGreaterThanOrEqual(1);
    expect(reloads(after, 'failure')).toBeGreaterThanOrEqual(1);
    expect(invalidSignals).toBeGreaterThanOrEqual(5);
    expect(gateway.isAlive()).toBe(true);
  });

  it('the last valid file is in effect after an invalid one is refused', async () => {
    await gateway.writeConfig(validConfig(41));
    gateway.child.kill('SIGHUP');
    const aliases = async () =>
      (await request(gateway.url, { method: 'GET', path: '/v1/aliases', headers: { authorization: `Bearer ${CLIENT_KEY}` } })).body;
    const deadline = Date.now() + 5_000;
    while (!(await aliases()).includes('variant 41') && Date.now() < deadline) await sleep(50);
    expect(await aliases()).toContain('variant 41');

    await gateway.writeConfig(invalidConfig(0));
    gateway.child.kill('SIGHUP');
    await sleep(300);
    expect(await aliases()).toContain('variant 41');
    const r = await chat(gateway.url, 'mana/fast-text', { stream: true });
    expect(r.status).toBe(200);
    expect(streamEnding(r)).toBe('done');
    expect(r.headers['x-mana-llm-resolved']).toBe('beta/m'); // variant 41 (odd) puts beta first
  });
});
