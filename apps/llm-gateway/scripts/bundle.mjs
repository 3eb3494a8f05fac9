#!/usr/bin/env node
/**
 * Builds the gateway and writes a self-contained bundle of it: the build
 * stage of apps/llm-gateway/Dockerfile, and what a deploy without Docker runs.
 *
 *   node apps/llm-gateway/scripts/bundle.mjs DIR
 *
 * In an installed workspace (`pnpm install --frozen-lockfile` first) it
 *   1. builds @mana/llm-gateway and the workspace packages it depends on (turbo; cached when built),
 *   2. deploys it into DIR with production dependencies only
 *      (`pnpm --filter @mana/llm-gateway deploy --prod DIR`: pnpm 12 copies the
 *      workspace packages' published files, `dist`, in; nothing links back to the workspace),
 *   3. checks that DIR holds what the run step starts.
 *
 * The bundle then runs with nothing but Node 20, from DIR: `node dist/main.js`
 * (the Dockerfile's CMD; the default config is DIR/aliases.yaml). DIR must be
 * empty or missing. Exit codes: 0 done, 1 a step failed, 2 usage error.
 * A test runs this script into an empty folder and serves a request from the
 * bundle with plain `node` (src/e2e/bundle.e2e.test.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** What the run step needs in the bundle: its entry point, the default config, the built workspace packages. */
const REQUIRED = ['dist/main.js', 'aliases.yaml', 'package.json', 'node_modules/@mana/llm-router/dist/index.js'];

/** pnpm as the caller runs it (a script started by pnpm names it), else from PATH. */
function pnpm() {
  const execPath = process.env.npm_execpath;
  if (execPath === undefined || execPath === '' || !/pnpm/.test(path.basename(execPath))) return { file: 'pnpm', prefix: [] };
  return /\.[cm]?js$/.test(execPath) ? { file: process.execPath, prefix: [execPath] } : { file: execPath, prefix: [] };
}

function run(step, file, args) {
  console.log(`bundle: ${step}`);
  const result = spawnSync(file, args, {
    cwd: REPO_ROOT,
    stdio: 'inherit',
    env: { ...process.env, CI: process.env.CI ?? 'true', TURBO_TELEMETRY_DISABLED: '1' },
  });
  if (result.error !== undefined) throw new Error(`${step}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${step} exited with ${result.status ?? result.signal}`);
}

function main(argv) {
  if (argv.length !== 1 || argv[0].startsWith('-')) {
    console.error('usage: node apps/llm-gateway/scripts/bundle.mjs DIR   (DIR empty or missing)');
    return 2;
  }
  const dir = path.resolve(argv[0]);
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    console.error(`bundle: ${dir} is not empty`);
    return 2;
  }
  const { file, prefix } = pnpm();
  try {
    run('build', file, [...prefix, 'exec', 'turbo', 'run', 'build', '--filter=@mana/llm-gateway...', '--output-logs=errors-only']);
    // --prefer-offline: the packages are in the store since the install; the registry is asked only for a miss.
    run('deploy', file, [...prefix, '--filter', '@mana/llm-gateway', 'deploy', '--prod', '--prefer-offline', dir]);
  } catch (error) {
    console.error(`bundle: ${error.message}`);
    return 1;
  }
  const missing = REQUIRED.filter((entry) => !existsSync(path.join(dir, entry)));
  if (missing.length > 0) {
    console.error(`bundle: ${dir} lacks ${missing.join(', ')}`);
    return 1;
  }
  console.log(`bundle: ${dir} is ready; run it there with \`node dist/main.js\``);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
