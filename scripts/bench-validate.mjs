#!/usr/bin/env node
/**
 * Benchmark for validate-llm-strings.mjs: generates a tree of 10,000 source and
 * config files (TS, TSX, JSON, YAML, Python, Vue) in a temporary directory, runs
 * the validator on it several times and reports the scan time it measures
 * itself (the figure in its summary line) and the wall time including Node's
 * start-up. One file in ten mentions a provider (URL, comment, prose), so the
 * tokenizer runs on those; every 400th file (25 of 10,000) holds a planted raw
 * model string, which every run must find.
 *
 *   node scripts/bench-validate.mjs [--files 10000] [--runs 5] [--keep]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const FILES = option('--files', 10_000);
const RUNS = option('--runs', 5);
const validator = fileURLToPath(new URL('./validate-llm-strings.mjs', import.meta.url));

const body = (i) => `import { MANA_LLM } from '@mana/llm-aliases';
import type { Request } from './types.js';

/** Handler ${i}: builds a chat request for the gateway. */
export function build${i}(input: Request): { model: string; messages: unknown[] } {
  const prompt = \`Summarise item \${input.id} in \${input.words} words\`;
  const label = input.kind === 'short' ? "short answer" : 'long answer';
  // Keep the request small: the gateway adds provider settings.
  return {
    model: input.kind === 'short' ? MANA_LLM.FAST_TEXT : MANA_LLM.LONG_FORM,
    messages: [{ role: 'user', content: \`\${label}: \${prompt}\` }],
  };
}

export const retries${i} = /\\d+/.test(String(${i})) ? 2 : 1;
export const ratio${i} = ${i} / 3;
`;
const mention = '// Local development: see https://github.com/ollama/ollama for ollama/ setup.\n';
const kinds = [
  ['ts', (i, extra) => extra + body(i)],
  ['ts', (i, extra) => extra + body(i)],
  ['ts', (i, extra) => extra + body(i)],
  ['ts', (i, extra) => extra + body(i)],
  ['ts', (i, extra) => extra + body(i)],
  ['tsx', (i, extra) => `${extra}export const View${i} = () => <section title="Item ${i}"><p>It's item ${i}</p></section>;\n${body(i)}`],
  ['json', (i, extra) => JSON.stringify({ name: `pkg-${i}`, note: extra.trim(), scripts: { build: 'tsc -p .' }, version: '1.0.0' }, null, 2)],
  ['yaml', (i, extra) => `# service ${i}\nservice:\n  name: svc-${i}\n  model: mana/long-form\n  note: "${extra.trim().replaceAll('"', "'")}"\n  replicas: 2\n`],
  ['py', (i, extra) => `${extra.replace('//', '#')}MODEL = "mana/fast-text"\n\ndef handle_${i}(event):\n    return {"model": MODEL, "id": ${i}}\n`],
  ['vue', (i, extra) => `<template>\n  <!-- ${extra.trim()} -->\n  <p>{{ label }}</p>\n</template>\n<script setup lang="ts">\nconst label = 'item ${i}';\n</script>\n`],
];

function generate(root) {
  const planted = [];
  for (let i = 0; i < FILES; i++) {
    const [ext, make] = kinds[i % kinds.length];
    const dir = path.join(root, i % 2 === 0 ? 'apps' : 'packages', `unit-${Math.floor(i / 100)}`, 'src');
    mkdirSync(dir, { recursive: true });
    let content = make(i, i % 10 === 3 ? mention : '');
    const file = path.join(dir, `file-${i}.${ext}`);
    if (i % 400 === 0) {
      content += `export const planted${i} = 'groq/llama-3.1-8b-instant';\n`;
      planted.push(file);
    }
    writeFileSync(file, content);
  }
  return planted.length;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const root = mkdtempSync(path.join(tmpdir(), 'bench-validate-'));
try {
  const t0 = performance.now();
  const planted = generate(root);
  console.log(`generated ${FILES} files (${planted} with a raw model string) in ${Math.round(performance.now() - t0)} ms: ${root}`);

  const own = [];
  const wall = [];
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    const result = spawnSync(process.execPath, [validator], { cwd: root, encoding: 'utf8' });
    wall.push(performance.now() - started);
    const summary = result.stdout.trim().split('\n').at(-1) ?? '';
    const match = /(\d+) raw provider model strings? in \d+ files? \((\d+) files scanned in (\d+) ms\)/.exec(summary);
    if (result.status !== 1 || match === null || Number(match[1]) !== planted || Number(match[2]) !== FILES) {
      console.error(`unexpected validator result (exit ${result.status}):\n${summary}\n${result.stderr}`);
      process.exitCode = 1;
      break;
    }
    own.push(Number(match[3]));
    console.log(`run ${run + 1}: ${match[3]} ms scan (validator's own figure), ${Math.round(wall.at(-1))} ms wall incl. node start-up`);
  }
  if (own.length === RUNS) {
    console.log(
      `median over ${RUNS} runs, ${FILES} files: ${median(own)} ms scan, ${Math.round(median(wall))} ms wall` +
        ` (node ${process.version}, ${process.platform}/${process.arch})`,
    );
  }
} finally {
  if (!args.includes('--keep')) rmSync(root, { recursive: true, force: true });
}
