import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess } from './gateway-process.js';

/**
 * A stand-in for the built gateway: the same CLI shape and log lines that
 * startGatewayProcess relies on, without depending on the gateway package.
 */
const STAND_IN = `
import http from 'node:http';
import { readFileSync } from 'node:fs';
const arg = (name) => process.argv[process.argv.indexOf(name) + 1];
const log = (line) => process.stdout.write(JSON.stringify({ level: 'info', ...line }) + '\\n');
if (process.env.STAND_IN_FAIL) { process.stderr.write('boom: ' + process.env.STAND_IN_FAIL + '\\n'); process.exit(3); }
const server = http.createServer((req, res) => res.end(readFileSync(arg('--config'), 'utf8')));
server.listen(Number(arg('--port')), arg('--host'), () => {
  process.stdout.write('not json\\n');
  log({ msg: 'listening', url: 'http://127.0.0.1:' + server.address().port, args: process.argv.slice(2), env: Object.keys(process.env).sort() });
});
process.on('SIGHUP', () => log({ msg: 'config reloaded', config: readFileSync(arg('--config'), 'utf8') }));
process.on('SIGTERM', () => { log({ msg: 'stopped' }); server.close(() => process.exit(0)); });
`;

let dir: string;
let mainPath: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'testkit-gw-'));
  mainPath = join(dir, 'main.mjs');
  await writeFile(mainPath, STAND_IN);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function get(url: string): Promise<string> {
  const response = await fetch(url);
  return response.text();
}

describe('startGatewayProcess', () => {
  it('starts on a loopback port with the config, a clean environment and the extra args', async () => {
    const gw = await startGatewayProcess({ mainPath, config: 'aliases: {}\n', args: ['--shutdown-grace', '5s'], env: { LOG_LEVEL: 'info' } });
    try {
      expect(gw.url).toBe(`http://127.0.0.1:${gw.port}`);
      expect(gw.pid).toBe(gw.child.pid);
      expect(await get(gw.url)).toBe('aliases: {}\n');
      const listening = gw.logs.find((l) => l.msg === 'listening')!;
      expect(listening.args).toEqual(['--config', gw.configPath, '--host', '127.0.0.1', '--port', '0', '--shutdown-grace', '5s']);
      expect(listening.env).toEqual(expect.arrayContaining(['LOG_LEVEL', 'PATH', 'MANA_LLM_DATA_DIR']));
      expect((listening.env as string[]).filter((k) => !['LOG_LEVEL', 'PATH', 'MANA_LLM_DATA_DIR'].includes(k) && !k.startsWith('NODE_'))).toEqual([]);
      expect(gw.output()).toContain('not json');
      expect(gw.logs.some((l) => l.msg === undefined)).toBe(false);
    } finally {
      await gw.stop();
    }
  });

  it('replaces the config, signals, waits for log lines and stops gracefully', async () => {
    const gw = await startGatewayProcess({ mainPath, config: 'a: 1\n' });
    await gw.writeConfig('b: 2\n');
    expect(await readFile(gw.configPath, 'utf8')).toBe('b: 2\n');
    gw.signal('SIGHUP');
    expect((await gw.waitForLog((l) => l.msg === 'config reloaded')).config).toBe('b: 2\n');
    expect(gw.isAlive()).toBe(true);
    const first = gw.stop();
    expect(gw.stop()).toBe(first);
    expect(await first).toEqual({ code: 0, signal: null });
    expect(await gw.waitForExit()).toEqual({ code: 0, signal: null });
    expect(gw.isAlive()).toBe(false);
    expect(gw.logs.at(-1)?.msg).toBe('stopped');
    await expect(readFile(gw.configPath, 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('stop({ signal: SIGKILL }) kills at once', async () => {
    const gw = await startGatewayProcess({ mainPath, config: '' });
    expect(await gw.stop({ signal: 'SIGKILL' })).toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('rejects with the output when the process exits before listening', async () => {
    await expect(startGatewayProcess({ mainPath, config: '', env: { STAND_IN_FAIL: 'no config' } })).rejects.toThrow(
      /gateway did not start: gateway exited; output:\nboom: no config/,
    );
  });

  it('waitForLog rejects on timeout with the output so far', async () => {
    const gw = await startGatewayProcess({ mainPath, config: '' });
    try {
      await expect(gw.waitForLog((l) => l.msg === 'never', 50)).rejects.toThrow(/timed out waiting for a log line; output so far:\nnot json/);
    } finally {
      await gw.stop();
    }
  });

  it('names a missing entry point and the hint', async () => {
    await expect(startGatewayProcess({ mainPath: join(dir, 'nope.js'), config: '', missingHint: 'build it first' })).rejects.toThrow(
      /nope\.js is missing: build it first/,
    );
  });
});
