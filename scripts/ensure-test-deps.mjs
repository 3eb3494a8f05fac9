#!/usr/bin/env node
/**
 * The machine packages the tests need, installed when missing: the first step
 * of `pnpm validate:all` (the README's test command, which `.ci/run` runs), so
 * a fresh machine and CI set up the same way and the two cannot drift.
 *
 * - PostgreSQL's server binaries: the usage store's and the replicas' tests
 *   start a throwaway cluster (not needed with MANA_LLM_TEST_DATABASE_URL);
 * - Chromium: the dashboard's browser tests (not needed with MANA_LLM_CHROMIUM).
 *
 * Installs with apt-get as root, or through `sudo -n` when that needs no
 * password; otherwise it stops and says exactly what to run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const POSTGRES_ROOT = '/usr/lib/postgresql';
const CHROMIUM = process.env.MANA_LLM_CHROMIUM || '/usr/bin/chromium';

/** One entry per package the tests need: how to tell it is there, and the way around it. */
const NEEDS = [
  {
    apt: 'postgresql',
    skip: () => Boolean(process.env.MANA_LLM_TEST_DATABASE_URL),
    present: () =>
      existsSync(POSTGRES_ROOT) && readdirSync(POSTGRES_ROOT).some((v) => existsSync(join(POSTGRES_ROOT, v, 'bin', 'initdb'))),
    instead: 'or set MANA_LLM_TEST_DATABASE_URL to a PostgreSQL server the tests may create databases on',
  },
  {
    apt: 'chromium',
    skip: () => false,
    present: () => existsSync(CHROMIUM),
    instead: 'or set MANA_LLM_CHROMIUM to a Chromium binary',
  },
];

const missing = NEEDS.filter((need) => !need.skip() && !need.present());
if (missing.length === 0) process.exit(0);

const names = missing.map((need) => need.apt);
if (process.env.MANA_LLM_CHROMIUM && names.includes('chromium')) {
  fail(`MANA_LLM_CHROMIUM is set to ${CHROMIUM}, which does not exist.`);
}
const installer = howToInstall();
if (installer === undefined) {
  fail(
    [
      `The tests need ${names.join(' and ')}, which this machine lacks, and this user cannot install packages.`,
      `Run:  sudo apt-get update && sudo apt-get install -y ${names.join(' ')}`,
      ...missing.map((need) => `      (${need.apt}: ${need.instead})`),
      'then run the tests again.',
    ].join('\n'),
  );
}

console.log(`Installing what the tests need: ${names.join(', ')} (apt-get)…`);
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
for (const args of [['update', '-qq'], ['install', '-y', '-qq', ...names]]) {
  const result = spawnSync(installer[0], [...installer.slice(1), 'apt-get', ...args], { stdio: ['ignore', 'ignore', 'inherit'], env });
  if (result.status !== 0) fail(`apt-get ${args.join(' ')} failed (exit ${result.status ?? result.signal}).`);
}
const still = missing.filter((need) => !need.present());
if (still.length > 0) fail(`Still missing after apt-get install: ${still.map((need) => need.apt).join(', ')}.`);
console.log(`Installed ${names.join(', ')}.`);

/** The command prefix that runs apt-get with the rights it needs, or undefined where none does. */
function howToInstall() {
  if (!commandExists('apt-get')) return undefined;
  if (process.getuid?.() === 0) return ['env'];
  if (commandExists('sudo') && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0) return ['sudo', '-n', 'env', 'DEBIAN_FRONTEND=noninteractive'];
  return undefined;
}

function commandExists(name) {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

function fail(message) {
  console.error(`ensure-test-deps: ${message}`);
  process.exit(1);
}
