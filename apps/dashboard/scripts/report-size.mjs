// After `vite build`: prints the dashboard's size as a browser downloads it
// (every file gzipped at level 9, as the gateway serves them) and fails the
// build when it exceeds the budget of 150 KB.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const BUDGET_BYTES = 150 * 1024; // 150 KB gzipped, all files together
const dist = fileURLToPath(new URL('../dist/', import.meta.url));

const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) walk(full);
    else files.push(full);
  }
};
walk(dist);

let raw = 0;
let gzipped = 0;
for (const file of files) {
  const body = readFileSync(file);
  raw += body.length;
  gzipped += Math.min(body.length, gzipSync(body, { level: 9 }).length);
}
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
process.stdout.write(`dashboard: ${files.length} files, ${kb(raw)}, ${kb(gzipped)} gzipped (budget ${kb(BUDGET_BYTES)}): ${files.map((f) => relative(dist, f)).join(', ')}\n`);
if (gzipped > BUDGET_BYTES) {
  process.stderr.write(`dashboard: ${kb(gzipped)} gzipped is over the ${kb(BUDGET_BYTES)} budget\n`);
  process.exit(1);
}
