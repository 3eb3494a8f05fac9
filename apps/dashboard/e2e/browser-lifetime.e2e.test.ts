/**
 * A Chromium the browser tests launched ends with the test process, even when
 * that process is killed (SIGKILL: no `afterAll`, no `browser.close()`).
 * Playwright talks to the browser over a pipe, and Chromium quits when the pipe
 * closes; this test keeps that so. A real child process plays the test runner.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './browser.js';

const PLAYWRIGHT = pathToFileURL(createRequire(import.meta.url).resolve('playwright-core')).href;
const GONE_WITHIN_MS = 15_000; // a loaded 2-core machine; ~1 s when idle

/**
 * The pids of Chromium's processes (not zombies). CHROMIUM_PATH may be a
 * wrapper script (Debian's is), so any command line naming chromium counts;
 * only processes that appear during the test are watched.
 */
function chromiumProcesses(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number)) {
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (cmdline.includes('chromium') && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z') pids.push(entry);
    } catch {
      // ended meanwhile
    }
  }
  return pids;
}

it('a launched Chromium ends when the test process is killed', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'dashboard-browser-'));
  let runner: ChildProcess | undefined;
  try {
    const runnerPath = join(dir, 'runner.mjs');
    await writeFile(
      runnerPath,
      `import playwright from ${JSON.stringify(PLAYWRIGHT)};
const { chromium } = playwright;
const browser = await chromium.launch({ executablePath: ${JSON.stringify(CHROMIUM_PATH)}, headless: true, args: ${JSON.stringify(CHROMIUM_ARGS)} });
process.stdout.write('launched ' + browser.version() + '\\n');
setInterval(() => {}, 1000);
`,
    );
    const before = new Set(chromiumProcesses());
    runner = spawn(process.execPath, [runnerPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const started = runner;
    started.stderr!.on('data', (chunk) => (output += chunk));
    await new Promise<void>((resolve, reject) => {
      started.stdout!.on('data', (chunk) => {
        output += chunk;
        if (output.includes('launched ')) resolve();
      });
      started.on('exit', () => reject(new Error(`the runner exited early:\n${output}`)));
    });
    const launched = chromiumProcesses().filter((pid) => !before.has(pid));
    expect(launched.length).toBeGreaterThan(0);
    runner.kill('SIGKILL');
    const deadline = Date.now() + GONE_WITHIN_MS;
    let left = launched;
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const now = new Set(chromiumProcesses());
      left = left.filter((pid) => now.has(pid));
    }
    for (const pid of left) process.kill(pid, 'SIGKILL'); // leave nothing behind, then fail
    expect(left).toEqual([]);
  } finally {
    runner?.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
});
