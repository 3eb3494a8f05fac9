/**
 * End-to-end harness: spawns the BUILT gateway (`node dist/main.js`) on a free
 * loopback port with a temp YAML config, and collects its JSON log lines.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const DIST_MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

export type LogLine = Record<string, unknown> & { msg?: string; level?: string };

export interface GatewayProcess {
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  readonly configPath: string;
  /** Parsed JSON log lines so far. */
  readonly logs: LogLine[];
  /** Everything written to stdout and stderr, for secret checks. */
  output(): string;
  writeConfig(yaml: string): Promise<void>;
  waitForLog(predicate: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Resolves with the exit code (null if killed by a signal). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Kills the process if still running and removes the temp dir. */
  stop(): Promise<void>;
}

export interface SpawnOptions {
  readonly config: string;
  readonly env?: Record<string, string>;
  readonly args?: readonly string[];
}

export async function spawnGateway(options: SpawnOptions): Promise<GatewayProcess> {
  if (!existsSync(DIST_MAIN)) {
    throw new Error(`${DIST_MAIN} is missing: build first (pnpm turbo run build --filter=@mana/llm-gateway...)`);
  }
  const dir = await mkdtemp(join(tmpdir(), 'mana-gw-e2e-'));
  const configPath = join(dir, 'aliases.yaml');
  await writeFile(configPath, options.config);

  const child = spawn(
    process.execPath,
    [DIST_MAIN, '--config', configPath, '--host', '127.0.0.1', '--port', '0', '--shutdown-grace', '10s', ...(options.args ?? [])],
    {
      // A clean environment: no provider keys from the machine leak into tests.
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const logs: LogLine[] = [];
  let raw = '';
  const waiters = new Set<{ predicate: (l: LogLine) => boolean; resolve: (l: LogLine) => void }>();
  let pending = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    raw += chunk;
    pending += chunk;
    let nl: number;
    while ((nl = pending.indexOf('\n')) !== -1) {
      const text = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        continue;
      }
      logs.push(line);
      for (const w of waiters) {
        if (w.predicate(line)) {
          waiters.delete(w);
          w.resolve(line);
        }
      }
    }
  });
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    raw += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });

  function waitForLog(predicate: (line: LogLine) => boolean, timeoutMs = 10_000): Promise<LogLine> {
    const found = logs.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const waiter = {
        predicate,
        resolve: (l: LogLine) => {
          clearTimeout(timer);
          resolve(l);
        },
      };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new Error(`timed out waiting for a log line; output so far:\n${raw.slice(-4000)}`));
      }, timeoutMs);
      waiters.add(waiter);
      void exited.then(() => {
        if (waiters.delete(waiter)) {
          clearTimeout(timer);
          reject(new Error(`gateway exited; output:\n${raw.slice(-4000)}`));
        }
      });
    });
  }

  let listening: LogLine;
  try {
    listening = await waitForLog((l) => l.msg === 'listening', 15_000);
  } catch (error) {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const url = String(listening.url);
  return {
    url,
    port: Number(new URL(url).port),
    child,
    configPath,
    logs,
    output: () => raw,
    writeConfig: (yaml) => writeFile(configPath, yaml),
    waitForLog,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The five required aliases, each with the given chain (YAML flow list items). */
export function aliasesYaml(chains: Record<string, readonly string[]>, fallbackChain: readonly string[]): string {
  const names = ['mana/fast-text', 'mana/long-form', 'mana/structured', 'mana/reasoning', 'mana/vision', ...Object.keys(chains)];
  const lines = ['aliases:'];
  for (const name of new Set(names)) {
    const chain = chains[name] ?? fallbackChain;
    lines.push(`  ${name}:`, `    description: "${name} (test)"`, '    chain:');
    for (const t of chain) lines.push(`      - ${t}`);
  }
  return lines.join('\n') + '\n';
}

/**
 * A parsed response body in tests: its shape is what the assertions check, so a
 * static type would only restate them.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;
