import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load-config.js';
import { otherAliases } from '../config/test-configs.js';
import { createRouter, type Router } from '../router.js';
import { failure } from '../test-support.js';

/**
 * A first-byte timeout fails the request over, but whether the provider is
 * down is decided by an immediate probe of it, not by one client's slow prompt.
 */

let cloud: FakeUpstream;
let silent: Server; // accepts connections and never answers anything, probes included
let silentUrl: string;
const sockets = new Set<Socket>();
let router: Router | undefined;

beforeAll(async () => {
  cloud = await startFakeOpenAI({ host: '127.0.0.1' });
  silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await cloud.close();
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
});
afterEach(async () => {
  await router?.close();
  router = undefined;
  cloud.reset();
});

function start(baseUrl: string): Router {
  const config = parseConfig(
    `settings: { first_byte_timeout: 150ms, probe_timeout: 300ms, failure_threshold: 2, probe_interval: 1h }
providers:
  up: { type: openai, base_url: "${baseUrl}", api_key_required: false }
aliases:
  mana/long-form: [up/slow]
  mana/fast-text: [up/fast]
${otherAliases('mana/long-form').replace(/ {2}mana\/fast-text:.*\n/, '')}`,
    { env: {} },
  );
  router = createRouter({ config });
  return router;
}

const ask = (r: Router, model: string) => r.execute({ model, body: { messages: [{ role: 'user', content: 'hi' }] }, stream: false });
const until = async (check: () => boolean, ms = 3_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
};

describe('a first-byte timeout', () => {
  it('on a slow but reachable provider fails that request only: other requests keep being served', async () => {
    cloud.on('slow', { kind: 'answer', headerDelayMs: 600 });
    const r = start(cloud.baseUrl);
    for (let i = 0; i < 2; i++) {
      const error = await failure(ask(r, 'mana/long-form'));
      expect(error.outcome.attempts.map((a) => a.reason)).toEqual(['first_byte_timeout']);
    }
    await until(() => cloud.probeCount() >= 1);
    expect(cloud.probeCount()).toBeGreaterThanOrEqual(1); // the timeouts asked the provider itself
    const fast = await ask(r, 'mana/fast-text');
    expect(fast.outcome.target).toBe('up/fast');
    expect(r.health().find((p) => p.provider === 'up')).toMatchObject({ healthy: true, consecutiveFailures: 0 });
  });

  it('on a provider that answers nothing at all (its probe too) still opens the breaker', async () => {
    const r = start(silentUrl);
    for (let i = 0; i < 2; i++) {
      await failure(ask(r, 'mana/long-form'));
      // Each timeout's probe runs into probe_timeout and counts one failure.
      await until(() => (r.health().find((p) => p.provider === 'up')?.consecutiveFailures ?? 0) > i, 2_000);
    }
    const error = await failure(ask(r, 'mana/fast-text'));
    expect(error.code).toBe('no_healthy_provider');
    expect(error.outcome.attempts.map((a) => a.reason)).toEqual(['unhealthy']);
  });
});
