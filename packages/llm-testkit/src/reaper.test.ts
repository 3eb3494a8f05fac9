/**
 * What a test starts ends when the test process is killed without cleaning up
 * (SIGKILL: no exit handler, no `afterAll`). A real child process plays the
 * test runner: it starts a gateway stand-in and a throwaway PostgreSQL through
 * the BUILT testkit (turbo builds it before the tests), prints what it
 * started, and is then killed.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL_VARIABLE } from './test-postgres.js';

const BUILT_TESTKIT = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const REAPED_WITHIN_MS = 10_000; // a loaded 2-core machine; it is ~1 s when idle

/** A gateway stand-in that ignores SIGTERM, as a gateway busy draining would for a while. */
const STUBBORN_GATEWAY = `
import http from 'node:http';
process.on('SIGTERM', () => {});
const server = http.createServer((req, res) => res.end('up'));
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ msg: 'listening', url: 'http://127.0.0.1:' + server.address().port, pid: process.pid }) + '\\n');
});
`;

const RUNNER = (mainPath: string, withPostgres: boolean) => `
import { startGatewayProcess, startTestPostgres } from ${JSON.stringify(BUILT_TESTKIT)};
const gw = await startGatewayProcess({ mainPath: ${JSON.stringify(mainPath)}, config: '' });
const pg = ${withPostgres} ? await startTestPostgres() : undefined;
process.stdout.write(JSON.stringify({ gatewayPid: gw.pid, postgresUrl: pg?.url }) + '\\n');
setInterval(() => {}, 1000);
`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'testkit-reaper-'));
  await writeFile(join(dir, 'main.mjs'), STUBBORN_GATEWAY);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Running and not a zombie (a zombie whose parent died may wait for an init that never reaps). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

function accepts(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function within(ms: number, check: () => Promise<boolean> | boolean): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Starts the pretend runner, waits for what it started, then SIGKILLs it. */
async function startAndKillRunner(withPostgres: boolean): Promise<{ gatewayPid: number; postgresUrl?: string }> {
  const runnerPath = join(dir, `runner-${withPostgres}.mjs`);
  await writeFile(runnerPath, RUNNER(join(dir, 'main.mjs'), withPostgres));
  const runner = spawn(process.execPath, [runnerPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  runner.stderr.on('data', (chunk) => (output += chunk));
  const started = await new Promise<{ gatewayPid: number; postgresUrl?: string }>((resolve, reject) => {
    runner.stdout.on('data', (chunk) => {
      output += chunk;
      const line = output.split('\n').find((l) => l.startsWith('{"gatewayPid"'));
      if (line !== undefined) resolve(JSON.parse(line));
    });
    runner.on('exit', () => reject(new Error(`the runner exited early:\n${output}`)));
  });
  expect(running(started.gatewayPid)).toBe(true);
  if (started.postgresUrl !== undefined) expect(await accepts(started.postgresUrl)).toBe(true);
  runner.kill('SIGKILL');
  return started;
}

describe('after the test process is killed', () => {
  it('the gateway it started is gone, even one that ignores SIGTERM', async () => {
    const { gatewayPid } = await startAndKillRunner(false);
    const gone = await within(REAPED_WITHIN_MS, () => !running(gatewayPid));
    if (!gone) process.kill(gatewayPid, 'SIGKILL'); // leave nothing behind, then fail
    expect(gone).toBe(true);
  }, 30_000);

  it.skipIf(Boolean(process.env[TEST_DATABASE_URL_VARIABLE]))('the throwaway PostgreSQL it started is stopped', async () => {
    const { gatewayPid, postgresUrl } = await startAndKillRunner(true);
    expect(await within(REAPED_WITHIN_MS, async () => !(await accepts(postgresUrl!)))).toBe(true);
    expect(await within(REAPED_WITHIN_MS, () => !running(gatewayPid))).toBe(true);
  }, 60_000); // initdb and a gateway start in the pretend runner: ~3 s idle, over 30 s seen on an overloaded machine
});
