/**
 * End-to-end harness: spawns the BUILT gateway (`node dist/main.js`) on a free
 * loopback port with a temp YAML config, and collects its JSON log lines. The
 * process handling itself is `startGatewayProcess` of @mana/llm-testkit.
 */
import { fileURLToPath } from 'node:url';
import {
  startGatewayProcess,
  type GatewayCommand,
  type GatewayExit,
  type GatewayLogLine,
  type GatewayProcess as TestkitGatewayProcess,
} from '@mana/llm-testkit';

export const DIST_MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * `pnpm start` in the repository root, exactly as the README's first command
 * (the pnpm that runs these tests when there is one: `npm_execpath`, else the
 * `pnpm` on PATH).
 */
export function pnpmStart(): GatewayCommand {
  const pnpm = process.env.npm_execpath;
  if (pnpm === undefined || pnpm === '') return { file: 'pnpm', args: ['start'], cwd: REPO_ROOT };
  return /\.[cm]?js$/.test(pnpm)
    ? { file: process.execPath, args: [pnpm, 'start'], cwd: REPO_ROOT }
    : { file: pnpm, args: ['start'], cwd: REPO_ROOT };
}

export type LogLine = GatewayLogLine;

export interface GatewayProcess extends TestkitGatewayProcess {
  /** Kills the process (SIGKILL) if still running and removes the temp dir. */
  stop(): Promise<GatewayExit>;
}

export interface SpawnOptions {
  readonly config: string;
  /** Start with this command (e.g. `pnpmStart()`) instead of `node dist/main.js`. */
  readonly command?: GatewayCommand;
  readonly env?: Record<string, string>;
  readonly args?: readonly string[];
}

export async function spawnGateway(options: SpawnOptions): Promise<GatewayProcess> {
  const gateway = await startGatewayProcess({
    mainPath: DIST_MAIN,
    missingHint: 'build first (pnpm turbo run build --filter=@mana/llm-gateway...)',
    tempPrefix: 'mana-gw-e2e-',
    config: options.config,
    command: options.command,
    args: options.command === undefined ? ['--shutdown-grace', '10s', ...(options.args ?? [])] : options.args,
    // A clean environment: no provider keys from the machine leak into tests.
    env: { LOG_LEVEL: 'info', ...options.env },
  });
  return { ...gateway, stop: () => gateway.stop({ signal: 'SIGKILL' }) };
}

/**
 * The head of a config whose chains start with a dead target: settings that
 * keep trying it (no breaker opens), `dead` on a refused port and `cloud` on
 * an OpenAI-compatible fake, then `more` providers (indented YAML lines).
 */
export function deadThenCloud(deadPort: number, cloudBaseUrl: string, more = ''): string {
  return (
    `settings:\n  probe_interval: 60s\n  failure_threshold: 1000\n` +
    `providers:\n` +
    `  dead: { type: openai, base_url: "http://127.0.0.1:${deadPort}/v1", api_key_required: false }\n` +
    `  cloud: { type: openai, base_url: "${cloudBaseUrl}", api_key: "sk-cloud-upstream" }\n` +
    more
  );
}

/** Shared with the dashboard's browser tests. */
export { aliasesYaml, chatOnce, TEST_EMBEDDING_SPACE } from '@mana/llm-testkit';

/**
 * A parsed response body in tests: its shape is what the assertions check, so a
 * static type would only restate them.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;
