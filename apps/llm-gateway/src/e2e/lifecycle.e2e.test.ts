/**
 * End to end process lifecycle: SIGHUP reloads, SIGTERM drains an open stream
 * and exits 0, and the refusal to listen publicly without keys.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { DIST_MAIN, aliasesYaml, spawnGateway, type GatewayProcess } from './harness.js';

let cloud: FakeUpstream;
let providers: string;

beforeAll(async () => {
  cloud = await startFakeOpenAI();
  // A slow stream: 6 chunks, 150 ms apart (~0.75 s).
  cloud.on('slow', { kind: 'answer', content: 'a b c d e f', chunks: 6, chunkIntervalMs: 150 });
  providers = `providers:\n  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false }\n`;
});

afterAll(async () => {
  await cloud?.close();
});

async function readSse(res: Response, onFirst?: () => void): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let first = true;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (first && text.includes('"content"')) {
      first = false;
      onFirst?.();
    }
  }
  return text;
}

function contentOf(sse: string): string {
  return sse
    .split('\n\n')
    .filter((e) => e.startsWith('data: {'))
    .map((e) => JSON.parse(e.slice(6)).choices?.[0]?.delta?.content ?? '')
    .join('');
}

describe('SIGHUP', () => {
  let gw: GatewayProcess;
  afterAll(async () => gw?.stop());

  it('swaps a valid file in (in-flight streams finish on the old one) and keeps serving after an invalid one', async () => {
    const base = providers + aliasesYaml({ 'mana/slow': ['cloud/slow'] }, ['cloud/m1']);
    gw = await spawnGateway({ config: base });

    // A stream in flight across the reload that removes its alias.
    const streaming = fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mana/slow', messages: [{ role: 'user', content: 'x' }], stream: true }),
    });
    const res = await streaming;
    expect(res.status).toBe(200);
    const text = readSse(res);

    await gw.writeConfig(providers + aliasesYaml({ 'mana/extra': ['cloud/m7'] }, ['cloud/m1']));
    gw.child.kill('SIGHUP');
    await gw.waitForLog((l) => l.msg === 'config reloaded');
    const models = (await (await fetch(`${gw.url}/v1/models`)).json()) as { data: Array<{ id: string }> };
    const ids = models.data.map((m) => m.id);
    expect(ids).toContain('mana/extra');
    expect(ids).not.toContain('mana/slow');

    const sse = await text;
    expect(contentOf(sse)).toBe('a b c d e f');
    expect(sse).toContain('data: [DONE]');

    await gw.writeConfig('aliases: [this is not valid');
    gw.child.kill('SIGHUP');
    const failed = await gw.waitForLog((l) => l.msg?.startsWith('config reload failed') === true);
    expect(failed.level).toBe('error');
    expect(typeof failed.error).toBe('string');

    const after = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mana/extra', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(after.status).toBe(200);
    expect(after.headers.get('x-mana-llm-resolved')).toBe('cloud/m7');
    await after.text();
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toContain('mana_llm_config_reload_total{result="success"} 1');
    expect(metrics).toContain('mana_llm_config_reload_total{result="failure"} 1');
  });
});

describe('SIGTERM', () => {
  let gw: GatewayProcess;
  afterAll(async () => gw?.stop());

  it('lets an open stream finish, refuses new connections, exits 0', async () => {
    gw = await spawnGateway({ config: providers + aliasesYaml({}, ['cloud/slow']) });
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mana/long-form', messages: [{ role: 'user', content: 'x' }], stream: true }),
    });
    expect(res.status).toBe(200);
    let signalledAt = 0;
    const text = readSse(res, () => {
      signalledAt = Date.now();
      gw.child.kill('SIGTERM');
    });
    await gw.waitForLog((l) => l.msg?.startsWith('shutting down') === true);
    // No new connections once draining.
    await expect(fetch(`${gw.url}/healthz`)).rejects.toThrow();

    const sse = await text;
    expect(contentOf(sse)).toBe('a b c d e f');
    expect(sse).toContain('data: [DONE]');
    const exit = await gw.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalledAt).toBeLessThan(8_000);
    const stopped = await gw.waitForLog((l) => l.msg === 'stopped');
    expect(stopped.drained).toBe(true);
    expect(gw.logs.some((l) => l.msg === 'request' && l.status === 200 && l.stream === true)).toBe(true);
  });

  it('cuts what is left after the grace period, cancelling the upstream, and still exits 0', async () => {
    cloud.on('hang', { kind: 'hang' });
    const short = await spawnGateway({ config: providers + aliasesYaml({}, ['cloud/hang']), args: ['--shutdown-grace', '300ms'] });
    try {
      const pending = fetch(`${short.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'x' }] }),
      }).then(
        (r) => r.status,
        () => 'connection closed',
      );
      await cloud.waitForRequest((r) => r.model === 'hang', 10_000);
      const signalledAt = Date.now();
      short.child.kill('SIGTERM');
      expect(await short.exited).toEqual({ code: 0, signal: null });
      expect(Date.now() - signalledAt).toBeLessThan(5_000);
      expect(await pending).toBe('connection closed');
      const closed = await cloud.waitForClientClose(5_000);
      expect(closed.model).toBe('hang');
      expect((await short.waitForLog((l) => l.msg === 'stopped')).drained).toBe(false);
    } finally {
      await short.stop();
    }
  });

  it('still exits 0 when its stdout was closed (logs to a broken pipe)', async () => {
    const gw2 = await spawnGateway({ config: providers + aliasesYaml({}, ['cloud/m1']) });
    try {
      gw2.child.stdout!.destroy();
      // Requests keep working with nowhere to log.
      const res = await fetch(`${gw2.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(res.status).toBe(200);
      await res.text();
      gw2.child.kill('SIGTERM');
      expect(await gw2.exited).toEqual({ code: 0, signal: null });
    } finally {
      await gw2.stop();
    }
  });

  it('exits 0 right away when idle', async () => {
    const idle = await spawnGateway({ config: providers + aliasesYaml({}, ['cloud/m1']) });
    try {
      idle.child.kill('SIGINT');
      expect(await idle.exited).toEqual({ code: 0, signal: null });
    } finally {
      await idle.stop();
    }
  });
});

describe('startup', () => {
  it('a SIGHUP while the modules are still loading is logged and ignored, not fatal (exit 129)', async () => {
    // Module loading is made slow on purpose (a loader hook holds the first
    // module after the entry point for 1.5 s, as a cold disk would) so the
    // signal lands inside that window every time, whatever the machine's speed.
    const dir = await mkdtemp(join(tmpdir(), 'mana-gw-sighup-'));
    try {
      await writeFile(
        join(dir, 'hooks.mjs'),
        `import { writeSync } from 'node:fs';\n` +
          `let held = false;\n` +
          `export async function load(url, context, next) {\n` +
          `  if (!held && url.startsWith('file:') && url.includes('/dist/') && !url.endsWith('/dist/main.js')) {\n` +
          `    held = true;\n` +
          `    writeSync(2, 'module loading held\\n');\n` +
          `    await new Promise((resolve) => setTimeout(resolve, 1500));\n` +
          `  }\n` +
          `  return next(url, context);\n` +
          `}\n`,
      );
      await writeFile(join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n`);
      await writeFile(join(dir, 'aliases.yaml'), providers + aliasesYaml({}, ['cloud/m1']));
      const child = spawn(
        process.execPath,
        ['--import', pathToFileURL(join(dir, 'register.mjs')).href, DIST_MAIN, '--config', join(dir, 'aliases.yaml'), '--port', '0'],
        { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on('exit', (code, signal) => resolve({ code, signal })),
      );
      await new Promise<void>((resolve, reject) => {
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
          stderr += chunk;
          if (stderr.includes('module loading held')) resolve();
        });
        void exited.then(() => reject(new Error(`exited before loading modules: ${stderr}`)));
      });
      child.kill('SIGHUP');
      try {
        await expect.poll(() => stdout.includes('"msg":"listening"') || child.exitCode !== null || child.signalCode !== null, { timeout: 15_000 }).toBe(true);
        expect({ code: child.exitCode, signal: child.signalCode }).toEqual({ code: null, signal: null });
        expect(stdout).toContain('SIGHUP during startup: ignored');
        child.kill('SIGTERM');
        expect(await exited).toEqual({ code: 0, signal: null });
      } finally {
        child.kill('SIGKILL');
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  /** The built gateway run to its exit with `args`, in an environment of PATH alone. */
  const runBare = (args: readonly string[]) =>
    spawnSync(process.execPath, [DIST_MAIN, ...args], { env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8', timeout: 10_000 });

  it('refuses a non-loopback address without API keys, and says why', () => {
    const run = runBare(['--host', '0.0.0.0', '--port', '0']);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/Refusing to listen on 0\.0\.0\.0 without API keys/);
    expect(run.stderr).toMatch(/MANA_LLM_ADMIN_KEY.*service keys through POST \/admin\/keys/s);
  });

  it('fails clearly on a missing config file', () => {
    const run = runBare(['--config', '/nonexistent/aliases.yaml', '--port', '0']);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('/nonexistent/aliases.yaml');
  });

  it('--help lists the options', () => {
    const run = spawnSync(process.execPath, [DIST_MAIN, '--help'], { encoding: 'utf8', timeout: 10_000 });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('MANA_LLM_API_KEYS');
  });
});
