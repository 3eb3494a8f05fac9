#!/usr/bin/env node
/**
 * `pnpm demo`: the gateway in front of fake upstreams, with the first target of
 * every alias (local Ollama) down. Sends a few requests and prints what a user
 * would notice: the answer, X-Mana-LLM-Resolved, the attempts, then /v1/health.
 * Exits by itself. Needs no network, no Ollama and no API keys.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { MANA_LLM, MANA_LLM_ALIASES } from '@mana/llm-aliases';
import { refusingPort, startFakeOpenAI } from '@mana/llm-testkit';
import { DEFAULT_HOST, DEFAULT_MAX_BODY_BYTES, DEFAULT_DATA_DIR, DEFAULT_REQUEST_TIMEOUT_MS } from './cli.js';
import { startGateway } from './gateway.js';

type LogLine = Record<string, unknown>;

const bold = (s: string): string => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const dim = (s: string): string => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s);

/** Log lines go to memory so the demo can show each request's attempts. */
function memoryLogger(lines: LogLine[]) {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const text of chunk.toString('utf8').split('\n')) if (text) lines.push(JSON.parse(text) as LogLine);
      done();
    },
  });
  return pino({ level: 'info' }, sink);
}

function printAttempts(log: LogLine | undefined): void {
  const attempts = (log?.attempts ?? []) as Array<{ target: string; outcome: string; reason: string; ms: number }>;
  for (const a of attempts) {
    const mark = a.outcome === 'ok' ? '✔' : a.outcome === 'skipped' ? '↷' : '✘';
    console.log(`    ${mark} ${a.target.padEnd(34)} ${a.outcome.padEnd(8)} ${a.outcome === 'ok' ? '' : a.reason} ${dim(`${a.ms} ms`)}`);
  }
}

async function main(): Promise<void> {
  const deadPort = await refusingPort();
  const cloud = await startFakeOpenAI({ name: 'demo' });
  cloud.on('*', { kind: 'answer', content: 'Paris is the capital of France.', chunks: 5, chunkIntervalMs: 60 });
  const dir = await mkdtemp(join(tmpdir(), 'mana-llm-demo-'));
  const configPath = join(dir, 'aliases.yaml');

  // The shipped chains with a twist: "ollama" points at a port nobody listens on,
  // "groq" at a local fake that answers like the real OpenAI-compatible API.
  const chains: Record<string, [string, string]> = {
    [MANA_LLM.FAST_TEXT]: ['gemma3:4b', 'llama-3.1-8b-instant'],
    [MANA_LLM.LONG_FORM]: ['gemma3:12b', 'llama-3.3-70b-versatile'],
    [MANA_LLM.STRUCTURED]: ['qwen2.5:7b', 'llama-3.3-70b-versatile'],
    [MANA_LLM.REASONING]: ['qwen3:14b', 'deepseek-r1-distill-llama-70b'],
    [MANA_LLM.VISION]: ['gemma3:12b', 'llama-3.2-90b-vision-preview'],
    [MANA_LLM.EMBED]: ['nomic-embed-text', 'nomic-embed-text-v1.5'],
  };
  let yaml =
    `providers:\n` +
    `  ollama: { type: ollama, base_url: "http://127.0.0.1:${deadPort}" }\n` +
    `  groq: { type: openai, base_url: "${cloud.baseUrl}", api_key: "demo-key-not-secret" }\n` +
    `aliases:\n`;
  for (const info of MANA_LLM_ALIASES) {
    const [local, remote] = chains[info.alias]!;
    // An embedding alias names its one vector space (both targets serve the same weights).
    const kind = info.kind === 'embedding' ? `    kind: embedding\n    embedding_space: nomic-embed-text-v1.5\n` : '';
    yaml += `  ${info.alias}:\n    description: "${info.description}"\n${kind}    chain: ["ollama/${local}", "groq/${remote}"]\n`;
  }
  await writeFile(configPath, yaml);

  const logs: LogLine[] = [];
  const gateway = await startGateway(
    {
      configPath,
      host: DEFAULT_HOST,
      port: 0,
      apiKeys: [],
      adminKey: undefined,
      logLevel: 'info',
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      shutdownGraceMs: 2_000, // 2 s: the demo's requests are done when it stops
      requestTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
      insecure: false,
      corsOrigins: [],
      // The demo is throwaway: nothing to keep.
      usage: false,
      dataDir: DEFAULT_DATA_DIR,
      databaseUrl: undefined,
      usageRetentionMs: undefined,
      replicaName: undefined,
    },
    { logger: memoryLogger(logs), defaultMetrics: false },
  );
  const base = gateway.url;
  console.log(bold(`Mana LLM gateway demo — ${base}`));
  console.log(`Local Ollama (first in every chain) is down (127.0.0.1:${deadPort} refuses connections);`);
  console.log(`a fake Groq on ${cloud.url} answers.\n`);

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
    console.log(dim(`\nMetrics: GET ${base}/metrics (e.g. mana_llm_fallback_total). Stopping.`));
  } finally {
    await gateway.shutdown();
    await cloud.close();
    await rm(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
