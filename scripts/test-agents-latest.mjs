#!/usr/bin/env node
/**
 * `pnpm test:agents:latest`: the agent CLI e2e suite
 * (apps/llm-gateway/src/e2e/agents/) against the newest published Claude Code,
 * Codex and opencode instead of the pinned ones. For maintainers, not CI: it
 * installs from the npm registry into a temporary folder (install scripts off;
 * the suite runs each platform binary directly), prints the versions, runs the
 * suite with AGENT_CLI_ROOT pointing there, and removes the folder.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CLIS = ['@anthropic-ai/claude-code', '@openai/codex', 'opencode-ai'];
const root = mkdtempSync(join(tmpdir(), 'mana-agents-latest-'));
let status = 1;
try {
  writeFileSync(join(root, 'package.json'), '{"private": true}\n');
  execFileSync('npm', ['install', '--prefix', root, '--ignore-scripts', '--no-audit', '--no-fund', '--yes', ...CLIS.map((c) => `${c}@latest`)], { stdio: 'inherit' });
  for (const cli of CLIS) {
    const { version } = JSON.parse(readFileSync(join(root, 'node_modules', cli, 'package.json'), 'utf8'));
    console.log(`${cli} ${version}`);
  }
  execFileSync('pnpm', ['turbo', 'run', 'build', '--filter=@mana/llm-gateway...', '--output-logs=errors-only'], { stdio: 'inherit', env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' } });
  const run = spawnSync('pnpm', ['--filter', '@mana/llm-gateway', 'exec', 'vitest', 'run', 'src/e2e/agents/'], { stdio: 'inherit', env: { ...process.env, AGENT_CLI_ROOT: root } });
  status = run.status ?? 1;
} finally {
  rmSync(root, { recursive: true, force: true });
}
process.exit(status);
