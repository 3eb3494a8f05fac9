/**
 * Runs a real agent CLI (installed from npm) once, non-interactively, in a
 * throwaway home with its network pointed nowhere but loopback: proxy
 * variables at a closed port (anything it tries to fetch from the internet is
 * refused at once instead of hanging), telemetry and update checks off. The
 * CLI leads its own process group, which is killed when the run ends, times
 * out, or (through the testkit's reaper) when the test process dies.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startReaper } from '@mana/llm-testkit';

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** Environment every CLI gets: nothing from the machine but PATH. */
export function isolatedEnv(home: string, more: Record<string, string>): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    TMPDIR: home,
    HTTPS_PROXY: 'http://127.0.0.1:9',
    HTTP_PROXY: 'http://127.0.0.1:9',
    https_proxy: 'http://127.0.0.1:9',
    http_proxy: 'http://127.0.0.1:9',
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    ...more,
  };
}

export function tempHome(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * The file `file` of a CLI's platform package (an optional dependency of the
 * CLI's own package, installed beside it by pnpm): the native binary, run
 * directly, so the CLI's install script need not run.
 */
export function platformBinary(cliPackage: string, platformPackage: string, file: string, from = import.meta.url): string {
  const require = createRequire(from);
  const cliRoot = realpathSync(dirname(require.resolve(`${cliPackage}/package.json`)));
  const platformRoot = dirname(createRequire(join(cliRoot, 'package.json')).resolve(`${platformPackage}/package.json`));
  return join(platformRoot, file);
}

/** A file of a CLI's own package. */
export function cliFile(cliPackage: string, file: string, from = import.meta.url): string {
  return join(dirname(createRequire(from).resolve(`${cliPackage}/package.json`)), file);
}

/** Runs `file args` in `cwd` with `env` until it exits or `timeoutMs` passes (then its group is killed). */
export function runCli(file: string, args: readonly string[], options: { cwd: string; env: Record<string, string>; timeoutMs: number }): Promise<CliRun> {
  const started = Date.now();
  const child = spawn(file, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const reaper = startReaper({ killGroup: child.pid!, whileAlive: child.pid! });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s.slice(0, 4_000_000)));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s.slice(0, 4_000_000)));
  const killGroup = (): void => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  const timer = setTimeout(killGroup, options.timeoutMs);
  return new Promise((resolve) => {
    child.on('error', (error) => {
      stderr += String(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      // Whatever it left behind (helpers, background servers) goes with it.
      killGroup();
      reaper.dismiss();
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}
