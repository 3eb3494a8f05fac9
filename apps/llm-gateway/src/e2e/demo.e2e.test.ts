/**
 * `pnpm demo`, as the README's tour runs it: the built `dist/demo.js`. It prints
 * what the README shows (the tour's output block, timings aside) and exits by
 * itself; with `--serve` it stays up for the docs' examples until SIGINT.
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startReaper } from '@mana/llm-testkit';
import { codeBlocks } from './docs/markdown.js';
import { REPO_ROOT, type Json } from './harness.js';

const DEMO = join(REPO_ROOT, 'apps/llm-gateway/dist/demo.js');

/** Timings and ports differ on every run; everything else of a line is what the reader sees. */
const shape = (line: string): string => line.replace(/\d+(\.\d+)?/g, 'N').trimEnd();

function runDemo(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [DEMO, ...args], { timeout: 60_000, env: { PATH: process.env.PATH ?? '' } }, (error, stdout, stderr) =>
      done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

describe('pnpm demo', () => {
  it("prints the README tour's output (timings aside) and exits 0 by itself", async () => {
    const tour = codeBlocks('README.md', readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')).find((b) => b.lang === 'text' && b.text.includes('X-Mana-LLM-Resolved'));
    expect(tour, 'the README tour shows the demo output in a text block').toBeDefined();
    const result = await runDemo([]);
    expect(result.code, result.stderr).toBe(0);
    const printed = new Set(result.stdout.split('\n').map(shape));
    const shown = tour!.text.split('\n').filter((line) => line.trim() !== '…' && line.trim() !== '');
    expect(shown.filter((line) => !printed.has(shape(line)))).toEqual([]);
    expect(result.stdout).toMatch(/ollama\s+unhealthy until .* last error: connect_refused/);
  }, 90_000);

  it('refuses an argument it does not know, with how to call it', async () => {
    const result = await runDemo(['--serv']);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe('unknown argument --serv: pnpm demo [-- --serve]');
  }, 90_000);

  it('--serve stays up for the docs: the demo gateway answers, usage and admin routes are on; SIGINT stops it', async () => {
    // What `pnpm demo -- --serve` runs: the script gets the `--` as well.
    const child = spawn(process.execPath, [DEMO, '--', '--serve'], {
      env: { PATH: process.env.PATH ?? '', PORT: '0', MANA_LLM_ADMIN_KEY: 'change-me' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const reaper = startReaper({ killGroup: child.pid!, whileAlive: child.pid! });
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    try {
      let output = '';
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const url = await new Promise<string>((done, fail) => {
        const timer = setTimeout(() => fail(new Error(`no "stays up" line within 30 s:\n${output}`)), 30_000);
        child.stdout!.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const match = /stays up on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
          if (match) {
            clearTimeout(timer);
            done(match[1]!);
          }
        });
        void exited.then((code) => fail(new Error(`the demo exited (${code}):\n${output}`)));
      });

      const chat = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(chat.status).toBe(200);
      expect(chat.headers.get('x-mana-llm-attempts')).toBe('1'); // Ollama is already known to be down
      expect(((await chat.json()) as Json).choices[0].message.content).toBe('Paris is the capital of France.');
      const usage = await fetch(`${url}/admin/usage/requests?limit=1`, { headers: { authorization: 'Bearer change-me' } });
      expect(usage.status).toBe(200);
      // Each request it serves is one line on its output.
      await expect.poll(() => output, { timeout: 10_000 }).toMatch(/POST \/v1\/chat\/completions → 200 {2}mana\/fast-text/);

      child.kill('SIGINT');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
      reaper.dismiss();
    }
  }, 90_000);
});
