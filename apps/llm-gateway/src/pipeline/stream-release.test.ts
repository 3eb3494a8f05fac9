/**
 * A committed stream is released whatever ends its relay, including a throw
 * while the gateway writes the response head (seen with a header-invalid
 * model id: the stream was never closed, its background slot leaked, and with
 * the limit reached every later background request waited forever). The head
 * write is made to fail here on the real server's response object, since
 * valid input can no longer reach that path.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { parseCli } from '../cli.js';
import { aliasesYaml } from '../e2e/harness.js';
import { startGateway, type Gateway } from '../gateway.js';

let cloud: FakeUpstream;
let gateway: Gateway;
let dir: string;

beforeAll(async () => {
  cloud = await startFakeOpenAI({ host: '127.0.0.1' });
  dir = await mkdtemp(join(tmpdir(), 'mana-gw-release-'));
  const configPath = join(dir, 'aliases.yaml');
  await writeFile(
    configPath,
    `background_concurrency: 1\nproviders:\n  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false }\n` +
      aliasesYaml({}, ['cloud/m1']),
  );
  // Its own data folder: not the ./data a `pnpm start` in this checkout writes (and whose service keys it would enforce).
  const cli = parseCli(['--config', configPath, '--host', '127.0.0.1', '--port', '0', '--data-dir', join(dir, 'data')], {});
  if (cli.kind !== 'run') throw new Error('unexpected CLI result');
  gateway = await startGateway(cli.options, { logger: pino({ level: 'silent' }), defaultMetrics: false });
  // Before the gateway's own handler: a request that asks for it gets a response whose head cannot be written.
  gateway.server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers['x-test-break-head'] === undefined) return;
    // Once, as a header-invalid value did: the gateway's 500 afterwards is written normally.
    const writeHead = res.writeHead;
    res.writeHead = (() => {
      res.writeHead = writeHead;
      throw new Error('writing the head failed');
    }) as typeof res.writeHead;
  });
});

afterAll(async () => {
  await gateway?.shutdown(1_000);
  await cloud?.close();
  await rm(dir, { recursive: true, force: true });
});

const post = (body: unknown, headers: Record<string, string>): Promise<Response> =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-mana-llm-priority': 'background', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5_000),
  });

describe('a committed stream whose response head cannot be written', () => {
  it('still frees its background slot and in-flight count', async () => {
    const messages = [{ role: 'user', content: 'hi' }];
    for (let i = 0; i < 2; i++) {
      const broken = await post({ model: 'mana/fast-text', stream: true, messages }, { 'x-test-break-head': '1' });
      expect(broken.status).toBe(500);
      expect(((await broken.json()) as { error: { code: string } }).error.code).toBe('internal_error');
    }
    // One background slot: had a broken stream kept it, this would wait until the 5 s timeout.
    const next = await post({ model: 'mana/fast-text', messages }, {});
    expect(next.status).toBe(200);
    expect(cloud.count()).toBe(3);
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metrics).toMatch(/^mana_llm_in_flight_requests 0$/m);
  });
});
