/**
 * Runs a BUILT gateway as a child process for end-to-end and reliability tests:
 * a temp YAML config, loopback host, port 0 (the real URL is read back from the
 * `listening` log line), JSON log lines collected as they come, signals, stop.
 *
 * The testkit does not depend on the gateway: the caller passes the path of its
 * built entry point (`apps/llm-gateway/dist/main.js`), or the command a user
 * types (`pnpm start` in the repository root) to start it exactly as the
 * README says, with the config, host and port in environment variables.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { startReaper } from './reaper.js';

/** One parsed JSON log line of the gateway. */
export type GatewayLogLine = Record<string, unknown> & { msg?: string; level?: string | number };

export interface GatewayExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A command that starts the gateway as a user would, e.g. `pnpm start` in the repository root. */
export interface GatewayCommand {
  readonly file: string;
  readonly args: readonly string[];
  /** Where the command runs; MANA_LLM_CONFIG is given relative to it, as a user in that directory would write it. */
  readonly cwd: string;
}

export interface GatewayProcessOptions {
  /** The built gateway entry point, run with `node`. */
  readonly mainPath: string;
  /**
   * Run this command instead of `node <mainPath>`, with no flags of the
   * testkit's own: the config path (relative to `command.cwd`), host and port
   * go in MANA_LLM_CONFIG, HOST=127.0.0.1 and PORT=0 unless `env` sets them.
   * The command runs in its own process group (cleaned up by `stop`), and
   * signals go to the gateway's pid from its `listening` line.
   */
  readonly command?: GatewayCommand;
  /** The alias config (YAML), written to a temp file passed as `--config` (or MANA_LLM_CONFIG with `command`). */
  readonly config: string;
  /** Extra CLI arguments, after `--config <file> --host 127.0.0.1 --port 0` (after `command.args` with `command`). */
  readonly args?: readonly string[];
  /**
   * The child's whole environment besides PATH (and MANA_LLM_DATA_DIR, a `data`
   * folder inside the temp directory unless given here): nothing else is
   * inherited, so no provider key of the machine leaks into a test.
   */
  readonly env?: Record<string, string>;
  /** Prefix of the temp directory holding the config. Default `mana-gateway-`. */
  readonly tempPrefix?: string;
  /** How long to wait for the `listening` line. Default 15 s. */
  readonly startTimeoutMs?: number;
  /** Appended to the error when `mainPath` does not exist (e.g. how to build it). */
  readonly missingHint?: string;
}

export interface GatewayProcess {
  /** `http://127.0.0.1:PORT`, from the `listening` line. */
  readonly url: string;
  readonly port: number;
  /** The gateway's own pid (from its `listening` line; with `command` not the child's pid). */
  readonly pid: number;
  readonly child: ChildProcess;
  readonly configPath: string;
  /** Parsed JSON log lines (stdout) so far. */
  readonly logs: GatewayLogLine[];
  /** Everything written to stdout and stderr so far (JSON or not), e.g. for secret checks. */
  output(): string;
  /** Replaces the config file atomically (write + rename: a reload never reads half a file). */
  writeConfig(yaml: string): Promise<void>;
  /** The first log line (past or future) matching `predicate`; rejects on timeout or exit. */
  waitForLog(predicate: (line: GatewayLogLine) => boolean, timeoutMs?: number): Promise<GatewayLogLine>;
  /** Sends a signal (SIGHUP: reload, SIGTERM/SIGINT: graceful stop). */
  signal(signal: NodeJS.Signals): void;
  isAlive(): boolean;
  /** Resolves when the process has exited (code null if killed by a signal). */
  readonly exited: Promise<GatewayExit>;
  waitForExit(): Promise<GatewayExit>;
  /**
   * Stops the process if still running — `signal` (default SIGTERM), then SIGKILL
   * after `killAfterMs` (default 10 s) — and removes the temp dir. Idempotent:
   * later calls return the first call's result.
   */
  stop(options?: { signal?: NodeJS.Signals; killAfterMs?: number }): Promise<GatewayExit>;
}

const DEFAULT_START_TIMEOUT_MS = 15_000; // 15 s: a cold start on a loaded 2-core machine
const COMMAND_START_TIMEOUT_MS = 60_000; // 60 s: `pnpm start` checks the build (turbo) before starting
const DEFAULT_KILL_AFTER_MS = 10_000; // 10 s of graceful shutdown before SIGKILL
const DEFAULT_LOG_WAIT_MS = 10_000; // 10 s
const OUTPUT_TAIL_CHARS = 4_000; // how much output an error message quotes

/** Spawns the gateway and resolves once it logs `listening` (rejects with its output if it does not). */
export async function startGatewayProcess(options: GatewayProcessOptions): Promise<GatewayProcess> {
  if (!existsSync(options.mainPath)) {
    throw new Error(`${options.mainPath} is missing${options.missingHint ? `: ${options.missingHint}` : ''}`);
  }
  const dir = await mkdtemp(join(tmpdir(), options.tempPrefix ?? 'mana-gateway-'));
  const configPath = join(dir, 'aliases.yaml');
  await writeFile(configPath, options.config);

  // The usage database goes into the temp folder (removed with it) unless the caller names one.
  const dataDir = join(dir, 'data');
  const command = options.command;
  const child =
    command === undefined
      ? spawn(
          process.execPath,
          [options.mainPath, '--config', configPath, '--host', '127.0.0.1', '--port', '0', ...(options.args ?? [])],
          {
            env: { PATH: process.env.PATH ?? '', MANA_LLM_DATA_DIR: dataDir, ...options.env },
            stdio: ['ignore', 'pipe', 'pipe'],
            detached: true,
          },
        )
      : spawn(command.file, [...command.args, ...(options.args ?? [])], {
          cwd: command.cwd,
          // pnpm and turbo need a home directory; still nothing else of the machine's environment.
          env: {
            PATH: process.env.PATH ?? '',
            HOME: process.env.HOME ?? tmpdir(),
            MANA_LLM_CONFIG: relative(command.cwd, configPath),
            HOST: '127.0.0.1',
            PORT: '0',
            MANA_LLM_DATA_DIR: dataDir,
            ...options.env,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: true,
        });
  // The child leads a process group of its own (`detached`), so the reaper can end it and
  // everything it started when this test process dies without calling `stop`.
  const reaper = child.pid === undefined ? undefined : startReaper({ killGroup: child.pid, whileAlive: child.pid });
  const logs: GatewayLogLine[] = [];
  const waiters = new Set<{ predicate: (line: GatewayLogLine) => boolean; resolve: (line: GatewayLogLine) => void }>();
  let raw = '';
  let pending = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    raw += chunk;
    pending += chunk;
    let nl: number;
    while ((nl = pending.indexOf('\n')) !== -1) {
      const text = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      let line: GatewayLogLine;
      try {
        line = JSON.parse(text) as GatewayLogLine;
      } catch {
        continue; // not a JSON line; still in `raw`
      }
      logs.push(line);
      for (const waiter of waiters) {
        if (waiter.predicate(line)) {
          waiters.delete(waiter);
          waiter.resolve(line);
        }
      }
    }
  });
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    raw += chunk;
  });
  const exited = new Promise<GatewayExit>((resolve) => {
    child.on('exit', (code, signal) => {
      reaper?.dismiss();
      resolve({ code, signal });
    });
  });
  const isAlive = () => child.exitCode === null && child.signalCode === null;
  /** SIGKILL to the child's whole process group (with `command`: pnpm, turbo and the gateway). */
  const killAll = (): void => {
    if (child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    }
    if (isAlive()) child.kill('SIGKILL');
  };
  const tail = () => raw.slice(-OUTPUT_TAIL_CHARS);

  function waitForLog(predicate: (line: GatewayLogLine) => boolean, timeoutMs = DEFAULT_LOG_WAIT_MS): Promise<GatewayLogLine> {
    const found = logs.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const waiter = {
        predicate,
        resolve: (line: GatewayLogLine) => {
          clearTimeout(timer);
          resolve(line);
        },
      };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new Error(`timed out waiting for a log line; output so far:\n${tail()}`));
      }, timeoutMs);
      waiters.add(waiter);
      void exited.then(() => {
        if (waiters.delete(waiter)) {
          clearTimeout(timer);
          reject(new Error(`gateway exited; output:\n${tail()}`));
        }
      });
    });
  }

  let listening: GatewayLogLine;
  try {
    listening = await waitForLog(
      (line) => line.msg === 'listening',
      options.startTimeoutMs ?? (command === undefined ? DEFAULT_START_TIMEOUT_MS : COMMAND_START_TIMEOUT_MS),
    );
  } catch (error) {
    killAll();
    await rm(dir, { recursive: true, force: true });
    throw new Error(`gateway did not start: ${(error as Error).message}`, { cause: error });
  }
  const url = String(listening.url);
  const pid = typeof listening.pid === 'number' ? listening.pid : child.pid!;
  const signalGateway = (signal: NodeJS.Signals): void => {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  };
  let stopped: Promise<GatewayExit> | undefined;
  return {
    url,
    port: Number(new URL(url).port),
    pid,
    child,
    configPath,
    logs,
    output: () => raw,
    async writeConfig(yaml) {
      const next = `${configPath}.${process.pid}.next`;
      await writeFile(next, yaml);
      await rename(next, configPath);
    },
    waitForLog,
    signal: signalGateway,
    isAlive,
    exited,
    waitForExit: () => exited,
    stop({ signal = 'SIGTERM', killAfterMs = DEFAULT_KILL_AFTER_MS } = {}) {
      stopped ??= (async () => {
        if (isAlive()) {
          signalGateway(signal);
          const timer = setTimeout(killAll, killAfterMs);
          await exited;
          clearTimeout(timer);
        }
        if (command !== undefined) killAll(); // whatever of the group outlived its leader
        await rm(dir, { recursive: true, force: true });
        return exited;
      })();
      return stopped;
    },
  };
}
