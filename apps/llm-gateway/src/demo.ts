#!/usr/bin/env node
/**
 * `pnpm demo`: the gateway in front of fake upstreams, with the first target of
 * every alias (local Ollama) down. Sends a few requests and prints what a user
 * would notice: the answer, X-Mana-LLM-Resolved, the attempts, then /v1/health.
 * Exits by itself. Needs no network, no Ollama and no API keys.
 *
 * `pnpm demo -- --serve` then keeps the gateway up on PORT (default 3025) until
 * Ctrl-C, with usage recording on (in a temp folder) and the admin routes on
 * when MANA_LLM_ADMIN_KEY is set, so the docs' curl examples can be tried
 * against it; it prints one line per request it serves.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { MANA_LLM } from '@mana/llm-aliases';
import { authRequired, DEFAULT_HOST, DEFAULT_MAX_BODY_BYTES, DEFAULT_PORT, DEFAULT_REQUEST_TIMEOUT_MS } from './cli.js';
import { demoConfigYaml, startDemoUpstreams } from './demo-setup.js';
import { startGateway } from './gateway.js';

type LogLine = Record<string, unknown>;

const bold = (s: string): string => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const dim = (s: string): string => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s);

/** How many log lines the demo keeps to show attempts from (the newest; `--serve` runs for long). */
const KEPT_LOG_LINES = 1_000;

/** Log lines go to memory so the demo can show each request's attempts; `onLine` sees each as it comes. */
function memoryLogger(lines: LogLine[], onLine: (line: LogLine) => void) {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const text of chunk.toString('utf8').split('\n')) {
        if (!text) continue;
        const line = JSON.parse(text) as LogLine;
        lines.push(line);
        if (lines.length > KEPT_LOG_LINES) lines.shift();
        onLine(line);
      }
      done();
    },
  });
  return pino({ level: 'info' }, sink);
}

/** `--serve`: one short line per request the gateway served after the scripted ones. */
function printServed(line: LogLine): void {
  if (line.msg !== 'request' || String(line.req_id).startsWith('demo-')) return;
  const status = String(line.status);
  const code = typeof line.code === 'string' ? ` ${line.code}` : '';
  console.log(`   ${line.method} ${line.path} → ${status}${code}  ${line.alias ?? ''} ${line.target ?? ''} ${dim(`${line.duration_ms} ms`)}`);
}

function parseArgs(argv: readonly string[]): { serve: boolean; port: number } {
  // `pnpm demo -- --serve` hands the script its `--` too.
  for (const arg of argv) if (arg !== '--serve' && arg !== '--') throw new Error(`unknown argument ${arg}: pnpm demo [-- --serve]`);
  const serve = argv.includes('--serve');
  const port = serve ? Number(process.env.PORT || DEFAULT_PORT) : 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`invalid PORT ${process.env.PORT}`);
  return { serve, port };
}

function printAttempts(log: LogLine | undefined): void {
  const attempts = (log?.attempts ?? []) as Array<{ target: string; outcome: string; reason: string; ms: number }>;
  for (const a of attempts) {
    const mark = a.outcome === 'ok' ? '✔' : a.outcome === 'skipped' ? '↷' : '✘';
    console.log(`    ${mark} ${a.target.padEnd(34)} ${a.outcome.padEnd(8)} ${a.outcome === 'ok' ? '' : a.reason} ${dim(`${a.ms} ms`)}`);
  }
}

async function main({ serve, port }: { serve: boolean; port: number }): Promise<void> {
  const upstreams = await startDemoUpstreams();
  const dir = await mkdtemp(join(tmpdir(), 'mana-llm-demo-'));
  const configPath = join(dir, 'aliases.yaml');
  await writeFile(configPath, demoConfigYaml(upstreams));
  const adminKey = serve ? process.env.MANA_LLM_ADMIN_KEY || undefined : undefined;

  const logs: LogLine[] = [];
  let serving = false;
  const gateway = await startGateway(
    {
      configPath,
      host: DEFAULT_HOST,
      port,
      apiKeys: [],
      adminKey,
      logLevel: 'info',
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      shutdownGraceMs: 2_000, // 2 s: the demo's requests are done when it stops
      requestTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
      insecure: false,
      authRequired: authRequired(DEFAULT_HOST, false),
      corsOrigins: [],
      // The demo is throwaway: nothing to keep (with --serve, records go to the temp folder, for the usage API).
      recordUsage: serve,
      dataDir: join(dir, 'data'),
      databaseUrl: undefined,
      usageRetentionMs: undefined,
      replicaName: undefined,
      tracing: undefined,
    },
    {
      logger: memoryLogger(logs, (line) => {
        if (serving) printServed(line);
      }),
      defaultMetrics: false,
    },
  );
  const base = gateway.url;
  console.log(bold(`Mana LLM gateway demo — ${base}`));
  console.log(`Local Ollama (first in every chain) is down (${upstreams.ollamaUrl} refuses connections);`);
  console.log(`a fake Groq on ${upstreams.cloud.url} answers.\n`);

  const requestLog = (id: string): LogLine | undefined => logs.find((l) => l.msg === 'request' && l.req_id === id);

  async function ask(n: number, model: string, stream: boolean, note: string): Promise<void> {
    const id = `demo-${n}`;
    console.log(bold(`${n}. POST /v1/chat/completions  model=${model}  stream=${stream}`) + dim(`  — ${note}`));
    const started = performance.now();
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': id },
      body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'What is the capital of France?' }] }),
    });
    process.stdout.write(`   answer:   `);
    if (stream) {
      const decoder = new TextDecoder();
      let pending = '';
      for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
        pending += decoder.decode(bytes, { stream: true });
        let end: number;
        while ((end = pending.indexOf('\n\n')) !== -1) {
          const event = pending.slice(0, end);
          pending = pending.slice(end + 2);
          if (!event.startsWith('data: {')) continue;
          const delta = JSON.parse(event.slice(6)).choices?.[0]?.delta?.content;
          if (typeof delta === 'string') process.stdout.write(delta);
        }
      }
      process.stdout.write('\n');
    } else {
      const body = (await res.json()) as { choices?: Array<{ message?: { content?: string } }>; error?: { message: string } };
      console.log(body.choices?.[0]?.message?.content ?? `(${res.status}) ${body.error?.message ?? ''}`);
    }
    const ms = (performance.now() - started).toFixed(1);
    console.log(`   status:   ${res.status} in ${ms} ms`);
    console.log(`   X-Mana-LLM-Resolved: ${res.headers.get('x-mana-llm-resolved')}`);
    console.log(`   X-Mana-LLM-Alias:    ${res.headers.get('x-mana-llm-alias')}`);
    console.log(`   X-Mana-LLM-Attempts: ${res.headers.get('x-mana-llm-attempts')}`);
    await new Promise((r) => setImmediate(r)); // let the request's log line land
    printAttempts(requestLog(id));
    console.log('');
  }

  try {
    await ask(1, MANA_LLM.FAST_TEXT, false, 'Ollama refuses, the gateway fails over to Groq');
    await ask(2, MANA_LLM.LONG_FORM, true, 'streaming; the health cache now knows Ollama is down');
    await ask(3, MANA_LLM.FAST_TEXT, false, 'Ollama is skipped without a network call');

    console.log(bold('GET /v1/health'));
    const health = (await (await fetch(`${base}/v1/health`)).json()) as {
      status: string;
      providers: Array<{ provider: string; configured: boolean; healthy: boolean; consecutive_failures: number; unhealthy_until: string | null; last_error: string | null; unconfigured_reason: string | null }>;
    };
    console.log(`   overall: ${health.status}`);
    for (const p of health.providers) {
      const state = !p.configured
        ? `unconfigured (${p.unconfigured_reason})`
        : p.healthy
          ? 'healthy'
          : `unhealthy until ${p.unhealthy_until ?? '?'} — ${p.consecutive_failures} failures, last error: ${p.last_error}`;
      console.log(`   ${p.provider.padEnd(11)} ${state}`);
    }
    if (!serve) {
      console.log(dim(`\nMetrics: GET ${base}/metrics (e.g. mana_llm_fallback_total). Stopping.`));
      return;
    }
    console.log(bold(`\nThe demo gateway stays up on ${base} (Ctrl-C stops it). Try:`));
    console.log(`   curl -s ${base}/v1/models`);
    console.log(adminKey === undefined ? dim('   Admin routes are off: start with MANA_LLM_ADMIN_KEY=change-me to try them.') : `   Admin routes are on (MANA_LLM_ADMIN_KEY).`);
    serving = true;
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
  } finally {
    await gateway.shutdown();
    await upstreams.close();
    await rm(dir, { recursive: true, force: true });
  }
}

let args: { serve: boolean; port: number };
try {
  args = parseArgs(process.argv.slice(2));
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}

main(args).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
