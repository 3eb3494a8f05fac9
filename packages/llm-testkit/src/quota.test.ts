import { afterEach, describe, expect, test } from 'vitest';
import { startFakeOpenAI } from './fake-openai.js';
import type { FakeUpstream } from './types.js';

// A cloud account's request quota as a client sees it over real HTTP: N answers per window, then 429.

let fake: FakeUpstream | undefined;
afterEach(() => fake?.close());

const chat = (f: FakeUpstream, model = 'm') =>
  fetch(`${f.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });

describe('quota', () => {
  test('answers N requests per minute, then 429 with Retry-After and the OpenAI rate-limit body, whatever the model', async () => {
    fake = await startFakeOpenAI({ quota: { requests: 3 } });
    const statuses: number[] = [];
    for (const model of ['a', 'b', 'a', 'b', 'c']) statuses.push((await chat(fake, model)).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const refused = await chat(fake);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(50); // the window is a minute long
    expect(await refused.json()).toMatchObject({ error: { code: 'rate_limit_exceeded' } });
    expect(fake.quotaRefusals()).toBe(3);
    expect(fake.requests).toHaveLength(6); // refused ones are recorded too
    expect(fake.requests.filter((q) => q.behavior?.kind === 'status')).toHaveLength(3);
  });

  test('the window slides: a request is accepted again once the oldest accepted one is older than the window', async () => {
    fake = await startFakeOpenAI({ quota: { requests: 2, windowMs: 300 } });
    expect([(await chat(fake)).status, (await chat(fake)).status, (await chat(fake)).status]).toEqual([200, 200, 429]);
    const first = fake.requests[0]!.at;
    while (Date.now() <= first + 300) await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await chat(fake)).status).toBe(200);
    expect(fake.quotaRefusals()).toBe(1);
  });

  test('a refused request does not use up a step of an on() sequence; probes do not count', async () => {
    fake = await startFakeOpenAI({ quota: { requests: 1 } });
    fake.on('m', [{ kind: 'answer', content: 'first' }, { kind: 'answer', content: 'second' }]);
    await fetch(`${fake.baseUrl}/models`);
    expect(((await (await chat(fake)).json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe('first');
    expect((await chat(fake)).status).toBe(429);
    fake.reset(); // a fresh quota window, as well as a fresh script
    fake.on('m', [{ kind: 'answer', content: 'first' }, { kind: 'answer', content: 'second' }]);
    expect((await chat(fake)).status).toBe(200);
    expect(fake.quotaRefusals()).toBe(0);
  });

  test('refuses a quota that is not a whole number ≥ 1', async () => {
    await expect(startFakeOpenAI({ quota: { requests: 0 } })).rejects.toThrow(/quota.requests/);
  });
});
