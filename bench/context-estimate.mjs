// The context-fit estimator on a 1 MB prompt: how long one estimate blocks the
// event loop, and how that grows with size (it must be linear). Uses the built
// router (`pnpm build` first) and the corpus its tests measure accuracy on.
//
//   node bench/context-estimate.mjs [--runs=N]
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { estimateTokens } from '../packages/llm-router/dist/index.js';

const runs = Number(process.argv.find((a) => a.startsWith('--runs='))?.split('=')[1] ?? 30);
const corpusDir = fileURLToPath(new URL('../packages/llm-router/src/context/fixtures/corpus/', import.meta.url));
const corpus = readdirSync(corpusDir)
  .sort()
  .map((name) => readFileSync(corpusDir + name, 'utf8'))
  .join('\n');

/** `bytes` UTF-8 bytes of the mixed corpus, repeated. */
function prompt(bytes) {
  let text = corpus;
  while (Buffer.byteLength(text) < bytes) text += '\n' + text;
  let end = bytes;
  while (Buffer.byteLength(text.slice(0, end)) > bytes) end -= 1024;
  // A request's text comes out of JSON.parse as one flat string; concatenation builds a rope instead.
  return JSON.parse(JSON.stringify(text.slice(0, end)));
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function time(work) {
  for (let i = 0; i < 5; i++) work(); // warm up the JIT
  const samples = [];
  const cpu = [];
  let result;
  for (let i = 0; i < runs; i++) {
    const cpuStart = process.cpuUsage();
    const started = process.hrtime.bigint();
    result = work();
    samples.push(Number(process.hrtime.bigint() - started) / 1e6);
    const used = process.cpuUsage(cpuStart);
    cpu.push((used.user + used.system) / 1000);
  }
  // CPU time as well as wall time: on a shared machine the wall clock also counts time spent descheduled.
  return { ms: median(samples), cpuMs: median(cpu), max: Math.max(...samples), result };
}

const rows = [];
for (const size of [64 * 1024, 256 * 1024, 1024 * 1024, 4 * 1024 * 1024]) {
  const text = prompt(size);
  const r = time(() => estimateTokens(text));
  // For scale: what the gateway already spends on the same request before routing it.
  const body = JSON.stringify({ model: 'mana/long-form', messages: [{ role: 'user', content: text }] });
  const parse = time(() => JSON.parse(body));
  rows.push({
    size: `${size / 1024} KiB`,
    'median ms': r.ms.toFixed(2),
    'median CPU ms': r.cpuMs.toFixed(2),
    'max ms': r.max.toFixed(2),
    'MB/s (CPU)': (size / 1e6 / (r.cpuMs / 1000)).toFixed(0),
    'estimated tokens': r.result,
    'JSON.parse of the request, median ms': parse.ms.toFixed(2),
  });
}
console.log(`estimateTokens, ${runs} runs per size, Node ${process.version}`);
console.table(rows);
