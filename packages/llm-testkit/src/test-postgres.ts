/**
 * A real PostgreSQL for tests, never a mock. With MANA_LLM_TEST_DATABASE_URL set,
 * each call creates a fresh database on that server (dropped again by `stop()`).
 * Otherwise it starts a throwaway cluster from the machine's PostgreSQL binaries
 * (Debian's `postgresql` package: /usr/lib/postgresql/<version>/bin) in a
 * temporary folder, on a free loopback port, and removes it on `stop()`.
 * `initdb` refuses to run as root, so as root the cluster runs as the
 * `postgres` user on a folder that user owns.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freedEphemeralPort } from './ports.js';
import { startReaper } from './reaper.js';

const run = promisify(execFile);

export const TEST_DATABASE_URL_VARIABLE = 'MANA_LLM_TEST_DATABASE_URL';

export interface TestPostgres {
  /** Connection URL of a fresh, empty database. */
  readonly url: string;
  /** True when this helper owns the server, so `pauseServer`/`resumeServer` work. */
  readonly ownsServer: boolean;
  /** Stops the server, keeping its data (fault tests: "PostgreSQL stopped mid-load"). */
  pauseServer(): Promise<void>;
  /** Starts the paused server again on the same port. */
  resumeServer(): Promise<void>;
  /** Drops the database or removes the whole cluster. */
  stop(): Promise<void>;
}

export async function startTestPostgres(): Promise<TestPostgres> {
  const external = process.env[TEST_DATABASE_URL_VARIABLE];
  return external !== undefined && external !== '' ? freshDatabaseOn(external) : throwawayCluster();
}

async function freshDatabaseOn(serverUrl: string): Promise<TestPostgres> {
  const name = `mana_llm_test_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const refuse = async (): Promise<never> => {
    throw new Error(`The server of ${TEST_DATABASE_URL_VARIABLE} is not this test's to stop.`);
  };
  return {
    url: url.toString(),
    ownsServer: false,
    pauseServer: refuse,
    resumeServer: refuse,
    stop: () => adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined); // the query in flight fails with it; unheard, it would end the test process
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** The newest PostgreSQL server binaries on this machine. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

async function throwawayCluster(): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (bin === undefined) {
    throw new Error(
      `No PostgreSQL server binaries under /usr/lib/postgresql: install them (apt-get install -y postgresql) or set ${TEST_DATABASE_URL_VARIABLE}.`,
    );
  }
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'mana-pg-'));
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const ownerCommand = (tool: string, args: string[]): [string, ...string[]] =>
    asRoot ? ['runuser', '-u', 'postgres', '--', join(bin, tool), ...args] : [join(bin, tool), ...args];
  const asOwner = (tool: string, args: string[]) => {
    const [file, ...rest] = ownerCommand(tool, args);
    return run(file, rest);
  };
  let port = 0;
  let serverOptions = '';
  const start = () => asOwner('pg_ctl', ['-D', data, '-l', logFile, '-o', serverOptions, '-w', '-t', '30', 'start']);
  const stopServer = () => asOwner('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop']);
  // pg_ctl daemonises the server: it is no child of this process and would outlive a killed
  // test runner. The reaper stops it and removes its folder if this process dies first.
  const reaper = startReaper({ cleanup: [ownerCommand('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']), ['rm', '-rf', dir]] });
  try {
    if (asRoot) {
      const { stdout: uid } = await run('id', ['-u', 'postgres']);
      const { stdout: gid } = await run('id', ['-g', 'postgres']);
      chownSync(dir, Number(uid.trim()), Number(gid.trim()));
    }
    port = await freedEphemeralPort();
    serverOptions = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c full_page_writes=off`;
    // Durability is not what these tests are about: fsync off makes the cluster start in ~1 s.
    await asOwner('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
    await start();
  } catch (error) {
    // Nothing half-made stays behind: no folder, no server.
    await stopServer().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    reaper.dismiss();
    throw error;
  }
  let running = true;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    ownsServer: true,
    async pauseServer() {
      await stopServer();
      running = false;
    },
    async resumeServer() {
      await start();
      running = true;
    },
    async stop() {
      if (running) await stopServer().catch(() => undefined);
      running = false;
      rmSync(dir, { recursive: true, force: true });
      reaper.dismiss();
    },
  };
}
