/**
 * The Dockerfile's steps without a container runtime (none can run here):
 * its build stage's script (scripts/bundle.mjs) writes the bundle into an
 * empty temp folder, outside the workspace; its CMD then starts the bundle
 * from that folder with plain `node` (this Node binary, an empty PATH: no
 * pnpm, no workspace), on loopback with a minimal config whose one target is
 * a fake upstream; the bundle answers its health check and a chat request
 * made with the official openai SDK.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, realpath, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aliasesYaml, startFakeOpenAI, startGatewayProcess, type FakeUpstream, type GatewayProcess } from '@mana/llm-testkit';
import { REPO_ROOT } from './harness.js';

const DOCKERFILE = join(REPO_ROOT, 'apps/llm-gateway/Dockerfile');
const SCRIPT = 'apps/llm-gateway/scripts/bundle.mjs';
// Build (cached by turbo after the package's own pretest build) + `pnpm deploy` (~10 s here): generous on a loaded machine.
const BUNDLE_TIMEOUT_MS = 150_000;

let dir: string;
let emptyPath: string;
let upstream: FakeUpstream;
let gateway: GatewayProcess | undefined;
let bundleOutput = '';

/** The Dockerfile's run step: its last `CMD [...]`, as the exec-form array it is. */
function dockerCmd(dockerfile: string): string[] {
  const line = dockerfile
    .split('\n')
    .filter((l) => l.startsWith('CMD ['))
    .at(-1);
  if (line === undefined) throw new Error('the Dockerfile has no exec-form CMD');
  return JSON.parse(line.slice('CMD '.length)) as string[];
}

/** Runs the bundle script into `target` in its own process group, killed (with everything it started) when it overruns. */
function bundle(target: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, SCRIPT), target], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const collect = (chunk: Buffer) => (bundleOutput = (bundleOutput + chunk.toString()).slice(-8_000));
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, BUNDLE_TIMEOUT_MS - 5_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mana-gw-bundle-'));
  emptyPath = await mkdtemp(join(tmpdir(), 'mana-gw-no-tools-'));
  upstream = await startFakeOpenAI();
  upstream.on('m1', { kind: 'answer', content: 'Served from the bundle' });
}, 30_000);

afterAll(async () => {
  await gateway?.stop({ signal: 'SIGKILL' });
  await upstream?.close();
  await rm(dir, { recursive: true, force: true });
  await rm(emptyPath, { recursive: true, force: true });
});

describe('the Dockerfile, as a script', () => {
  it(
    'its build step bundles into an empty folder; its CMD starts the bundle there with plain node and serves a chat request',
    async () => {
      const dockerfile = await readFile(DOCKERFILE, 'utf8');
      // The image builds with this script and runs this command: what the test runs is what the Dockerfile says.
      expect(dockerfile).toContain(`node ${SCRIPT} /app`);
      const [node, ...args] = dockerCmd(dockerfile);
      expect(node).toBe('node');

      const code = await bundle(dir);
      expect(code, bundleOutput).toBe(0);
      // Self-contained: the workspace packages are copies inside the bundle, not links back to the repository.
      for (const name of await readdir(join(dir, 'node_modules/@mana'))) {
        expect(await realpath(join(dir, 'node_modules/@mana', name))).toMatch(new RegExp(`^${(await realpath(dir)).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/`));
      }

      gateway = await startGatewayProcess({
        mainPath: join(dir, args[0]!),
        command: { file: process.execPath, args, cwd: dir },
        config: `providers:\n  local: { type: openai, base_url: "${upstream.baseUrl}" }\n` + aliasesYaml({}, ['local/m1']),
        // As the image sets it; PATH names an empty folder, so nothing but this Node binary is there to run.
        env: { NODE_ENV: 'production', PATH: emptyPath },
        tempPrefix: 'mana-gw-bundle-run-',
      });
      const health = await fetch(`${gateway.url}/healthz`);
      expect(health.status).toBe(200);
      const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'not-needed-auth-off', maxRetries: 0 });
      const { data, response } = await client.chat.completions.create({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
      expect(data.choices[0]!.message.content).toBe('Served from the bundle');
      expect(response.headers.get('x-mana-llm-resolved')).toBe('local/m1');
      expect(upstream.count('m1')).toBe(1);
    },
    BUNDLE_TIMEOUT_MS,
  );
});
