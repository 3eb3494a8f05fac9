/**
 * The gateway started exactly as the README tells a user to: `pnpm start` in
 * the repository root, configured by environment variables (or by options
 * after `pnpm start --`), with a config of their own given by a path relative
 * to where they typed the command.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingPort, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { DEFAULT_CONFIG_PATH } from '../cli.js';
import { REPO_ROOT, aliasesYaml, pnpmStart, spawnGateway, type GatewayProcess, type Json } from './harness.js';

// `pnpm start` checks the build with turbo first: slower than `node dist/main.js`.
const START_TIMEOUT_MS = 90_000;

let local: FakeUpstream;
let deadPort: number;
let dir: string;
const running: GatewayProcess[] = [];

/** A newcomer's config: one local OpenAI-compatible server (no key: none is written). */
function localConfig(model: string): string {
  return `providers:\n  local: { type: openai, base_url: "${local.baseUrl}" }\n` + aliasesYaml({}, [`local/${model}`]);
}

async function start(options: Parameters<typeof spawnGateway>[0]): Promise<GatewayProcess> {
  const gateway = await spawnGateway(options);
  running.push(gateway);
  return gateway;
}

async function complete(gateway: GatewayProcess, headers: Record<string, string> = {}): Promise<{ status: number; body: Json; resolved: string | null }> {
  const res = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, body: await res.json(), resolved: res.headers.get('x-mana-llm-resolved') };
}

beforeAll(async () => {
  local = await startFakeOpenAI();
  local.on('from-env', { kind: 'answer', content: 'served by the env config' });
  local.on('from-flag', { kind: 'answer', content: 'served by the flag config' });
  deadPort = await refusingPort();
  dir = await mkdtemp(join(tmpdir(), 'mana-gw-start-'));
});

afterAll(async () => {
  await Promise.all(running.map((g) => g.stop()));
  await local?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('pnpm start, as the README says', () => {
  it(
    'MANA_LLM_CONFIG (relative to the repository root), HOST, PORT and MANA_LLM_API_KEYS take effect',
    async () => {
      const gateway = await start({
        command: pnpmStart(),
        config: localConfig('from-env'),
        env: { MANA_LLM_API_KEYS: 'start-key', LOG_LEVEL: 'info' },
      });
      // The testkit gave MANA_LLM_CONFIG relative to the repository root, where `pnpm start` ran.
      const listening = gateway.logs.find((l) => l.msg === 'listening')!;
      expect(listening.config).toBe(gateway.configPath);
      expect(listening.auth).toBe('on (1 key)');
      expect(gateway.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(gateway.port).not.toBe(3025);

      expect((await complete(gateway)).status).toBe(401);
      const answer = await complete(gateway, { authorization: 'Bearer start-key' });
      expect(answer.status).toBe(200);
      expect(answer.resolved).toBe('local/from-env');
      expect(answer.body.choices[0].message.content).toBe('served by the env config');
    },
    START_TIMEOUT_MS,
  );

  it(
    '`pnpm start -- --config <relative path>` wins over MANA_LLM_CONFIG',
    async () => {
      const flagConfig = join(dir, 'flag.yaml');
      await writeFile(flagConfig, localConfig('from-flag'));
      const gateway = await start({
        command: pnpmStart(),
        config: localConfig('from-env'),
        args: ['--', '--config', relative(REPO_ROOT, flagConfig), '--log-level', 'info'],
      });
      expect(gateway.logs.find((l) => l.msg === 'listening')!.config).toBe(flagConfig);
      const answer = await complete(gateway);
      expect(answer.status).toBe(200);
      expect(answer.resolved).toBe('local/from-flag');
    },
    START_TIMEOUT_MS,
  );

  it(
    'with nothing set, the bundled aliases.yaml serves',
    async () => {
      const gateway = await start({
        command: pnpmStart(),
        config: localConfig('from-env'),
        // Only what a user may have in their shell anyway; no MANA_LLM_CONFIG.
        env: { MANA_LLM_CONFIG: '', OLLAMA_URL: `http://127.0.0.1:${deadPort}` },
      });
      expect(gateway.logs.find((l) => l.msg === 'listening')!.config).toBe(DEFAULT_CONFIG_PATH);
      const aliases = (await (await fetch(`${gateway.url}/v1/aliases`)).json()) as Json;
      expect(aliases.data.find((a: Json) => a.alias === 'mana/fast-text').chain[0].target).toBe('ollama/gemma3:4b');
    },
    START_TIMEOUT_MS,
  );
});
