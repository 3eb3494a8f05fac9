/**
 * Reliability suite harness: spawns the BUILT gateway (`apps/llm-gateway/dist/main.js`)
 * as a process on a free loopback port (port 0, read back from its `listening`
 * log line), with a temp YAML config and real-looking secrets in its
 * environment. Everything the suite sees — response heads and bodies, log
 * lines, metrics — is captured so `assertNoSecrets()` can grep it. Process
 * handling is `startGatewayProcess` of @mana/llm-testkit; this file adds the
 * suite's secrets, metrics, HTTP client and config builder.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import {
  startGatewayProcess,
  type GatewayLogLine,
  type GatewayProcess as TestkitGatewayProcess,
} from '@mana/llm-testkit';
import { expect } from 'vitest';

const GATEWAY_MAIN = fileURLToPath(new URL('../apps/llm-gateway/dist/main.js', import.meta.url));

/** `RELIABILITY_PROFILE=full` runs the long version; the default is the CI-sized one. */
export const PROFILE: 'ci' | 'full' = process.env.RELIABILITY_PROFILE === 'full' ? 'full' : 'ci';

export const SIZES = {
  ci: { loadRequests: 3_000, loadConcurrency: 100, reloadRequests: 2_500, fuzzCases: 500, matrixPasses: 2, wrongKeys: 2_000 },
  full: { loadRequests: 30_000, loadConcurrency: 200, reloadRequests: 20_000, fuzzCases: 10_000, matrixPasses: 5, wrongKeys: 10_000 },
}[PROFILE];

/**
 * Real-looking keys (random, shaped like the providers' own). They are put in
 * the gateway's environment and referenced from the configs, and must never
 * come back in any response, header, log line or metric.
 */
function randomKey(prefix: string, length: number, alphabet: string): string {
  let out = prefix;
  for (let i = 0; i < length; i += 1) out += alphabet[Math.floor(Math.random() * alphabet.length)];
  return out;
}
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const HEX = '0123456789abcdef';
export const SECRETS = {
  RELIABILITY_OPENAI_KEY: randomKey('sk-proj-', 48, ALNUM),
  RELIABILITY_GROQ_KEY: randomKey('gsk_', 52, ALNUM),
  RELIABILITY_OPENROUTER_KEY: randomKey('sk-or-v1-', 64, HEX),
  /** Sent in a credential header (`x-api-key`), not as `api_key`. */
  RELIABILITY_HEADER_KEY: randomKey('sk-ant-api03-', 48, ALNUM),
  MANA_LLM_API_KEYS: randomKey('mana-live-', 40, ALNUM),
  MANA_LLM_ADMIN_KEY: randomKey('mana-admin-', 40, ALNUM),
} as const;
export const CLIENT_KEY = SECRETS.MANA_LLM_API_KEYS;
export const ADMIN_KEY = SECRETS.MANA_LLM_ADMIN_KEY;
/** The provider keys, in the order configs use them (`${RELIABILITY_*_KEY}`). */
export const PROVIDER_KEY_VARS = ['RELIABILITY_OPENAI_KEY', 'RELIABILITY_GROQ_KEY', 'RELIABILITY_OPENROUTER_KEY'] as const;

/** Everything observed in this test file: checked for secrets at the end. */
const captured: string[] = [];
export function capture(text: string): void {
  captured.push(text);
}

/** Every secret, and a 16-character slice from its middle (a partially masked leak still shows). */
export function findSecrets(text: string): string[] {
  const found: string[] = [];
  for (const [name, secret] of Object.entries(SECRETS)) {
    const middle = secret.slice(Math.floor(secret.length / 2) - 8, Math.floor(secret.length / 2) + 8);
    if (text.includes(secret) || text.includes(middle)) found.push(name);
  }
  return found;
}

/** Throws naming the secret and a little context (the secret itself masked). */
export function assertNoSecrets(extra: readonly string[] = []): { bytes: number } {
  let bytes = 0;
  for (const text of [...captured, ...extra]) {
    bytes += text.length;
    const found = findSecrets(text);
    if (found.length > 0) {
      const secret = SECRETS[found[0] as keyof typeof SECRETS];
      const at = text.indexOf(secret);
      const context = at === -1 ? '(partial match)' : text.slice(Math.max(0, at - 120), at).replace(/\s+/g, ' ');
      throw new Error(`secret ${found.join(', ')} leaked; text before it: …${context}[SECRET]`);
    }
  }
  return { bytes };
}

export type LogLine = GatewayLogLine;

export interface GatewayProcess extends Omit<TestkitGatewayProcess, 'stop'> {
  /** Parsed Prometheus text of /metrics. */
  metrics(): Promise<Metrics>;
  rssMb(): number;
  /** SIGTERM and wait (SIGKILL after 10 s); removes the temp dir. Returns the exit code. */
  stop(): Promise<number | null>;
}

export interface StartOptions {
  readonly config: string;
  readonly env?: Record<string, string>;
  readonly args?: readonly string[];
  /** Without client API keys (auth off). Default: keys on, like production. */
  readonly noAuth?: boolean;
}

export async function startGateway(options: StartOptions): Promise<GatewayProcess> {
  const secretsEnv: Record<string, string> = { ...SECRETS };
  if (options.noAuth) delete secretsEnv.MANA_LLM_API_KEYS;
  const gateway = await startGatewayProcess({
    mainPath: GATEWAY_MAIN,
    missingHint: 'run `pnpm test:reliability` (it builds first) or build the gateway',
    tempPrefix: 'mana-reliability-',
    config: options.config,
    args: ['--shutdown-grace', '5s', ...(options.args ?? [])],
    env: { LOG_LEVEL: 'info', ...secretsEnv, ...options.env },
  });
  let stopped: Promise<number | null> | undefined;
  return {
    ...gateway,
    async metrics() {
      const response = await request(gateway.url, { method: 'GET', path: '/metrics', headers: { authorization: `Bearer ${CLIENT_KEY}` } });
      return parseMetrics(response.body);
    },
    rssMb() {
      const status = readFileSync(`/proc/${gateway.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024;
    },
    stop() {
      stopped ??= gateway.stop().then((exit) => {
        capture(gateway.output());
        return exit.code;
      });
      return stopped;
    },
  };
}

/**
 * The end of every suite file (its `afterAll`): the gateway must exit 0 on
 * SIGTERM, the upstreams are closed, and everything captured — responses,
 * metrics and the gateway's whole output — must be free of secrets.
 */
export async function finishSuite(
  gateway: GatewayProcess | undefined,
  upstreams: readonly ({ close(): Promise<unknown> } | undefined)[],
): Promise<void> {
  const code = await gateway?.stop();
  await Promise.all(upstreams.map((upstream) => upstream?.close()));
  expect(code).toBe(0);
  assertNoSecrets();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------- metrics

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export class Metrics {
  constructor(
    readonly samples: readonly Sample[],
    readonly text: string,
  ) {}

  /** Sum of every sample of `name` whose labels include `match`. */
  sum(name: string, match: Record<string, string | ((value: string) => boolean)> = {}): number {
    let total = 0;
    for (const s of this.samples) {
      if (s.name !== name) continue;
      let ok = true;
      for (const [key, want] of Object.entries(match)) {
        const have = s.labels[key];
        if (have === undefined || (typeof want === 'function' ? !want(have) : have !== want)) ok = false;
      }
      if (ok) total += s.value;
    }
    return total;
  }
}

function parseMetrics(text: string): Metrics {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const part of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[part[1]!] = part[2]!.replace(/\\"/g, '"').replace(/\\n/g, '\n').replace(/\\\\/g, '\\');
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  capture(text);
  return new Metrics(samples, text);
}

// ---------------------------------------------------------------- HTTP client

export interface Response {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  readonly ms: number;
  /** For SSE: the `data:` payloads in order. */
  readonly events: string[];
}

export interface RequestOptions {
  readonly method?: string;
  readonly path?: string;
  readonly headers?: Record<string, string | number>;
  readonly body?: string | Buffer;
  readonly agent?: http.Agent;
  /** Abort (destroy the socket) after this many ms: the promise rejects with a timeout error. */
  readonly timeoutMs?: number;
}

/** One HTTP request; everything received is captured for the secret check. */
export function request(baseUrl: string, options: RequestOptions = {}): Promise<Response> {
  const { hostname, port } = new URL(baseUrl);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        hostname,
        port,
        method: options.method ?? 'POST',
        path: options.path ?? '/v1/chat/completions',
        headers: options.headers,
        agent: options.agent ?? false,
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (part: Buffer) => parts.push(part));
        res.on('end', () => {
          clearTimeout(timer);
          const body = Buffer.concat(parts).toString('utf8');
          capture(JSON.stringify(res.headers));
          capture(body);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, ms: performance.now() - started, events: sseEvents(body) });
        });
        res.on('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
      },
    );
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => req.destroy(new Error(`no complete response within ${options.timeoutMs} ms`)), options.timeoutMs);
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end(options.body);
  });
}

function sseEvents(body: string): string[] {
  const events: string[] = [];
  for (const block of body.split('\n\n')) {
    for (const line of block.split('\n')) if (line.startsWith('data: ')) events.push(line.slice(6));
  }
  return events;
}

/** A chat completion through the gateway, with the client key. */
export function chat(
  baseUrl: string,
  model: string,
  options: { stream?: boolean; agent?: http.Agent; timeoutMs?: number; requestId?: string; content?: string } = {},
): Promise<Response> {
  const body = JSON.stringify({
    model,
    stream: options.stream ?? false,
    messages: [{ role: 'user', content: options.content ?? 'Say hello.' }],
  });
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    authorization: `Bearer ${CLIENT_KEY}`,
  };
  if (options.requestId) headers['x-request-id'] = options.requestId;
  return request(baseUrl, { body, headers, agent: options.agent, timeoutMs: options.timeoutMs ?? 15_000 });
}

/** The documented terminal shapes of a 200 SSE stream. */
export function streamEnding(response: Response): 'done' | 'error_event' | 'neither' {
  const last = response.events.at(-1);
  if (last === '[DONE]') return 'done';
  if (last !== undefined) {
    try {
      const parsed = JSON.parse(last) as { error?: { code?: string } };
      if (parsed.error?.code) return 'error_event';
    } catch {
      // not JSON
    }
  }
  return 'neither';
}

// ---------------------------------------------------------------- config

/** The five required aliases plus `extra`, each `name → chain`; providers as given. */
export function configYaml(options: {
  settings?: Record<string, string | number>;
  providers: Record<
    string,
    { url: string; key?: string; type?: 'openai' | 'ollama'; settings?: Record<string, string | number>; headers?: Record<string, string> }
  >;
  aliases: Record<string, readonly string[]>;
  defaultChain: readonly string[];
}): string {
  const lines: string[] = [];
  if (options.settings) {
    lines.push('settings:');
    for (const [k, v] of Object.entries(options.settings)) lines.push(`  ${k}: ${v}`);
  }
  lines.push('providers:');
  for (const [name, p] of Object.entries(options.providers)) {
    const settings = p.settings
      ? `, settings: { ${Object.entries(p.settings)
          .map(([k, v]) => `${k}: ${v}`)
          .join(', ')} }`
      : '';
    const type = p.type ?? 'openai';
    const key = p.key ? `api_key: "\${${p.key}}"` : type === 'openai' ? 'api_key_required: false' : '';
    const headers = p.headers
      ? `, headers: { ${Object.entries(p.headers)
          .map(([k, v]) => `${k}: "${v}"`)
          .join(', ')} }`
      : '';
    lines.push(`  ${name}: { type: ${type}, base_url: "${p.url}"${key ? `, ${key}` : ''}${headers}${settings} }`);
  }
  lines.push('aliases:');
  const required = ['mana/fast-text', 'mana/long-form', 'mana/structured', 'mana/reasoning', 'mana/vision', 'mana/embed'];
  for (const name of new Set([...required, ...Object.keys(options.aliases)])) {
    const chain = options.aliases[name] ?? options.defaultChain;
    lines.push(`  ${name}:`, `    description: "${name} (reliability)"`);
    // MANA_LLM.EMBED must be an embedding alias with one vector space.
    if (name === 'mana/embed') lines.push('    kind: embedding', '    embedding_space: reliability-space');
    lines.push(`    chain: [${chain.join(', ')}]`);
  }
  return `${lines.join('\n')}\n`;
}

/** Request log lines (one per chat completion) by request id. */
export function requestLogs(gateway: GatewayProcess): Map<string, LogLine[]> {
  const byId = new Map<string, LogLine[]>();
  for (const line of gateway.logs) {
    if (line.msg !== 'request') continue;
    const id = String(line.req_id ?? line.request_id ?? line.requestId ?? '');
    const list = byId.get(id) ?? [];
    list.push(line);
    byId.set(id, list);
  }
  return byId;
}
