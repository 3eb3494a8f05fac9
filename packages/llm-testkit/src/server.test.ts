import { afterEach, describe, expect, test, vi } from 'vitest';
import { startFakeOllama } from './fake-ollama.js';
import { startFakeOpenAI } from './fake-openai.js';
import type { FakeUpstream, FakeUpstreamOptions } from './types.js';

// Lifecycle and bookkeeping, shared by both dialects (exercised through the OpenAI one).

const fakes: FakeUpstream[] = [];
async function start(options?: FakeUpstreamOptions): Promise<FakeUpstream> {
  const fake = await startFakeOpenAI(options);
  fakes.push(fake);
  return fake;
}
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

const chat = (fake: FakeUpstream, model: string, init: RequestInit = {}) =>
  fetch(`${fake.baseUrl}/chat/completions`, { method: 'POST', body: JSON.stringify({ model, messages: [] }), ...init });
const content = async (res: Response) => ((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content;
const causeCode = (e: unknown) => ((e as { cause?: { code?: string } }).cause ?? {}).code;

describe('behaviour selection', () => {
  test('a sequence is consumed one per request and its last element repeats', async () => {
    const fake = await start();
    fake.on('m', [{ kind: 'status', status: 503 }, { kind: 'status', status: 500 }, { kind: 'answer', content: 'ok' }]);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await chat(fake, 'm')).status);
    expect(statuses).toEqual([503, 500, 200, 200, 200]);
  });

  test("exact model, then '*', then options.default, then the built-in answer", async () => {
    const fake = await start({ default: { kind: 'status', status: 418 } });
    expect((await chat(fake, 'x')).status).toBe(418);
    fake.on('*', { kind: 'answer', content: 'star' });
    fake.on('exact', { kind: 'answer', content: 'exact' });
    expect(await content(await chat(fake, 'x'))).toBe('star');
    expect(await content(await chat(fake, 'exact'))).toBe('exact');
    const plain = await start();
    expect(await content(await chat(plain, 'gpt-x'))).toBe('Hello from gpt-x');
  });

  test('the name option tells otherwise identical fakes apart', async () => {
    const a = await start({ name: 'primary' });
    expect(await content(await chat(a, 'm'))).toBe('Hello from m via primary');
  });

  test('on() replaces an earlier behaviour and restarts its sequence', async () => {
    const fake = await start();
    fake.on('m', [{ kind: 'status', status: 500 }, { kind: 'answer' }]);
    await chat(fake, 'm');
    fake.on('m', [{ kind: 'status', status: 502 }, { kind: 'answer' }]);
    expect((await chat(fake, 'm')).status).toBe(502);
  });
});

describe('counts and waiting', () => {
  test('count() per model and in total; probes counted apart', async () => {
    const fake = await start();
    await Promise.all([chat(fake, 'a'), chat(fake, 'a'), chat(fake, 'b')].map(async (p) => (await p).text()));
    await (await fetch(`${fake.baseUrl}/models`)).text();
    expect([fake.count(), fake.count('a'), fake.count('b'), fake.count('c'), fake.probeCount()]).toEqual([3, 2, 1, 0, 1]);
    expect(fake.probes[0]).toMatchObject({ method: 'GET', path: '/v1/models' });
  });

  test('waitForRequest works whichever side wins the race, and hands each request out once', async () => {
    const fake = await start();
    const waiting = fake.waitForRequest();
    await (await chat(fake, 'first')).text();
    await (await chat(fake, 'second')).text();
    expect((await waiting).model).toBe('first');
    expect((await fake.waitForRequest()).model).toBe('second');
    const third = fake.waitForRequest((r) => r.model === 'third');
    await (await chat(fake, 'other')).text();
    await (await chat(fake, 'third')).text();
    expect((await third).model).toBe('third');
  });

  test('waitForRequest rejects after its timeout', async () => {
    const fake = await start();
    await expect(fake.waitForRequest(undefined, 50)).rejects.toThrow(/no request within 50 ms/);
  });

  test('waitForClientClose rejects after its timeout when nobody leaves', async () => {
    const fake = await start();
    await expect(fake.waitForClientClose(50)).rejects.toThrow(/client close/);
  });

  test('waitForClientClose can pick a request by predicate, skipping older abandoned ones', async () => {
    const fake = await start();
    fake.on('*', { kind: 'hang' });
    for (const model of ['old', 'new']) {
      // Left once the fake holds the request: a fixed timeout could fire before it arrived on a busy machine.
      const controller = new AbortController();
      const answer = chat(fake, model, { signal: controller.signal });
      await fake.waitForRequest((r) => r.model === model, 2_000);
      controller.abort();
      await expect(answer).rejects.toThrow();
    }
    expect((await fake.waitForClientClose(2_000, (r) => r.model === 'new')).model).toBe('new');
    expect((await fake.waitForClientClose(2_000)).model).toBe('old');
  });

  test('record:false keeps counts and waiters but no request list', async () => {
    const fake = await start({ record: false });
    const waiting = fake.waitForRequest();
    await (await chat(fake, 'm')).text();
    expect((await waiting).model).toBe('m');
    expect([fake.count('m'), fake.requests.length]).toEqual([1, 0]);
  });

  test('reset() forgets requests, behaviours, models and probe status', async () => {
    const fake = await start({ models: ['base'] });
    fake.on('m', { kind: 'status', status: 500 });
    fake.setModels(['x']);
    fake.setProbeStatus(503);
    await (await chat(fake, 'm')).text();
    fake.reset();
    expect([fake.count(), fake.requests.length]).toEqual([0, 0]);
    expect((await chat(fake, 'm')).status).toBe(200);
    const listing = (await (await fetch(`${fake.baseUrl}/models`)).json()) as { data: Array<{ id: string }> };
    expect(listing.data.map((d) => d.id)).toEqual(['base']);
  });
});

describe('connections and lifecycle', () => {
  test('openConnections counts kept-alive sockets; close() drops them', async () => {
    const fake = await start();
    await (await chat(fake, 'm')).text();
    expect(fake.openConnections()).toBeGreaterThanOrEqual(1);
    await fake.close();
    expect(fake.openConnections()).toBe(0);
  });

  test('stop() refuses connections on the port, restart() serves the same port again', async () => {
    const fake = await start();
    const { port, url } = fake;
    await fake.stop();
    const error = await chat(fake, 'm').catch((e: unknown) => e);
    expect(causeCode(error)).toBe('ECONNREFUSED');
    await fake.restart();
    expect([fake.port, fake.url]).toEqual([port, url]);
    expect((await chat(fake, 'm')).status).toBe(200);
  });

  test('stop() cuts in-flight requests like a crash, without blaming the client', async () => {
    const fake = await start();
    fake.on('m', { kind: 'hang' });
    const pending = chat(fake, 'm').catch((e: unknown) => e);
    await fake.waitForRequest();
    await fake.stop();
    expect(await pending).toBeInstanceOf(Error);
    expect(fake.requests[0]!.closedByClient).toBe(false);
    await vi.waitFor(() => expect(fake.openConnections()).toBe(0));
  });

  test('close() clears pending pacing timers and rejects waiters', async () => {
    const fake = await start();
    fake.on('m', { kind: 'answer', chunks: 3, chunkIntervalMs: 10_000, headerDelayMs: 0 });
    const res = await chat(fake, 'm', { body: JSON.stringify({ model: 'm', stream: true }) });
    const reading = res.text().catch((e: unknown) => e);
    const waiter = expect(fake.waitForClientClose(10_000)).rejects.toThrow(/closed/);
    await fake.close();
    expect(await reading).toBeInstanceOf(Error);
    await waiter;
    await expect(fake.restart()).rejects.toThrow();
  });

  test('close() leaves no servers, sockets or timers behind', async () => {
    // Counts only ref'd handles: the ones that would keep a process alive.
    type Tally = [servers: number, sockets: number, timers: number];
    const tally = (): Tally => {
      const kinds = process.getActiveResourcesInfo();
      const count = (kind: string) => kinds.filter((x) => x === kind).length;
      return [count('TCPServerWrap'), count('TCPSocketWrap'), count('Timeout')];
    };
    // Polls with an unref'd timer, so the poll itself is not in the tally
    // (vi.waitFor holds two ref'd timers while it retries, which the tally
    // would count as a leak).
    const settle = async (done: (t: Tally) => boolean, ms: number): Promise<Tally> => {
      const deadline = Date.now() + ms;
      while (!done(tally()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50).unref());
      return tally();
    };
    // Earlier tests' client sockets, and the 1 s timer wheel Node's fetch
    // keeps for a tick after its last request, stop by themselves.
    const before = await settle(([, sockets, timers]) => sockets === 0 && timers === 0, 5_000);
    const fake = await startFakeOllama();
    fake.on('hang', { kind: 'hang' });
    fake.on('slow', { kind: 'answer', chunkIntervalMs: 10_000, headerDelayMs: 10 });
    const hanging = fetch(`${fake.url}/api/chat`, { method: 'POST', body: '{"model":"hang"}' }).catch(() => undefined);
    const slow = fetch(`${fake.url}/api/chat`, { method: 'POST', body: '{"model":"slow"}' }).then((r) => r.text()).catch(() => undefined);
    await fake.waitForRequest((r) => r.model === 'hang');
    await fake.waitForRequest((r) => r.model === 'slow');
    await fake.close();
    await Promise.all([hanging, slow]);
    // The fake owns no timer after close(); fetch's wheel may need a tick or
    // two to notice its requests are gone. None may outlive that.
    const after = await settle(([servers, sockets, timers]) => servers <= before[0] && sockets === 0 && timers <= before[2], 5_000);
    expect(after[0]).toBeLessThanOrEqual(before[0]);
    expect(after[1]).toBe(0);
    expect(after[2]).toBeLessThanOrEqual(before[2]);
  }, 15_000); // the two settles above may take up to 5 s each under load: more than vitest's 5 s default

  test('a fake can be started on a chosen port', async () => {
    const first = await start();
    const port = first.port;
    await first.close();
    const again = await startFakeOllama({ port });
    fakes.push(again);
    expect(again.port).toBe(port);
  });
});
