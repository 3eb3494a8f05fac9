// CPU profile of our gateway under the benchmark's sequential load:
//   node bench/profile.mjs [--stream] [--requests=N] [--top=N] [--keep]
// Starts the fake upstream and the built gateway with `node --cpu-prof`, sends
// N sequential requests, stops the gateway (the profile is written on exit)
// and prints the functions with the most self time, grouped by file.
// --keep leaves the .cpuprofile under bench/results/raw/ (git-ignored).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from './lib/http-client.mjs';
import { repoRoot, startManaGateway, startUpstream } from './lib/procs.mjs';

const argv = process.argv.slice(2);
const option = (name, fallback) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const stream = argv.includes('--stream');
const requests = Number(option('requests', 20_000));
const top = Number(option('top', 25));

const tmp = mkdtempSync(path.join(os.tmpdir(), 'mana-profile-'));
const upstream = await startUpstream();
const configPath = path.join(tmp, 'aliases.yaml');
const aliases = ['fast-text', 'long-form', 'structured', 'reasoning', 'vision'];
writeFileSync(
  configPath,
  `providers:\n  bench: { type: openai, base_url: "${upstream.url}/v1", api_key: "sk-bench-upstream-not-secret" }\naliases:\n${aliases
    .map((a) => `  mana/${a}: { chain: [bench/fast] }`)
    .join('\n')}\n`,
);
const gateway = await startManaGateway({
  configPath,
  env: { MANA_LLM_API_KEYS: 'bench-client-key-not-secret' },
  nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${tmp}`],
});
const client = createClient({
  name: 'ours',
  url: gateway.url,
  model: 'mana/fast-text',
  headers: { authorization: 'Bearer bench-client-key-not-secret' },
});
const started = performance.now();
for (let i = 0; i < requests; i += 1) {
  const result = await client.chat({ stream });
  if (result.status !== 200) throw new Error(`status ${result.status}`);
}
const perRequestMs = (performance.now() - started) / requests;
client.close();
await gateway.stop();
await upstream.stop();

const file = readdirSync(tmp).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error('no .cpuprofile written (did the gateway exit cleanly?)');
const profile = JSON.parse(readFileSync(path.join(tmp, file), 'utf8'));

// Self time per node = samples hitting it × mean sample interval.
const interval = (profile.endTime - profile.startTime) / profile.samples.length / 1_000; // ms
const hits = new Map();
for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
const byFunction = new Map();
const byFile = new Map();
let total = 0;
for (const node of profile.nodes) {
  const count = hits.get(node.id) ?? 0;
  if (count === 0) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url ? url.replace(`file://${repoRoot}`, '').replace(/^.*node_modules\/\.pnpm\/([^/]+)\/node_modules\//, '$1: ') : '(native)';
  const key = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + count);
  byFile.set(where, (byFile.get(where) ?? 0) + count);
  total += count;
}
const show = (map, n) =>
  [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)}%  ${(v * interval).toFixed(0).padStart(6)} ms  ${k}`)
    .join('\n');
process.stdout.write(
  `${requests} sequential ${stream ? 'streaming' : 'non-streaming'} requests, ${perRequestMs.toFixed(3)} ms each at the client\n` +
    `\nself time by function (top ${top}):\n${show(byFunction, top)}\n\nself time by file (top 15):\n${show(byFile, 15)}\n`,
);
if (argv.includes('--keep')) {
  const raw = path.join(repoRoot, 'bench/results/raw');
  mkdirSync(raw, { recursive: true });
  renameSync(path.join(tmp, file), path.join(raw, `gateway-${stream ? 'stream' : 'json'}.cpuprofile`));
}
rmSync(tmp, { recursive: true, force: true });
