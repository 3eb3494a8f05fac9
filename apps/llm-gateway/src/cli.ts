/**
 * Command line and environment options of the gateway. Pure: takes argv and env,
 * returns options or a message; `main.ts` does the printing and exiting.
 */
import { isAbsolute, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { normalizeOrigin } from './http/cors.js';
import { parseDuration, parseSize, SCHEMA_WORKERS_MAX_DEFAULT } from '@mana/llm-router';
import { tracingConfig, type TracingConfig } from './tracing/tracing-config.js';

export interface GatewayOptions {
  /** YAML alias config path. */
  readonly configPath: string;
  readonly host: string;
  readonly port: number;
  /** Bearer keys accepted on /v1/*; empty = auth off. Never logged. */
  readonly apiKeys: readonly string[];
  /** Key for /admin/*; undefined = admin routes disabled. Never logged. */
  readonly adminKey: string | undefined;
  readonly logLevel: string;
  /** Largest accepted request body, in bytes. */
  readonly maxBodyBytes: number;
  /** How long SIGTERM/SIGINT waits for in-flight requests and streams, in ms. */
  readonly shutdownGraceMs: number;
  /** How long a client may take to send a whole request (head and body), in ms; then 408. */
  readonly requestTimeoutMs: number;
  readonly insecure: boolean;
  /**
   * The key check is on even while no key of either kind exists (every /v1
   * request 401 until a service key is made): see `authRequired`.
   */
  readonly authRequired: boolean;
  /** Origins allowed to call from a browser (CORS); `*` = any; empty = CORS off. */
  readonly corsOrigins: readonly string[];
  /** Usage recording; false with `--usage off`. */
  readonly recordUsage: boolean;
  /** Folder for the embedded usage database (created on first start). */
  readonly dataDir: string;
  /** PostgreSQL for usage instead of the embedded file. A secret: never logged. */
  readonly databaseUrl: string | undefined;
  /** How long usage records are kept, in ms; undefined: the config's `usage_retention`, else 30 days. */
  readonly usageRetentionMs: number | undefined;
  /**
   * This replica's name on usage records and shared health rows; undefined =
   * `<hostname>:<port>` with the port bound (gateway.ts binds before building).
   */
  readonly replicaName: string | undefined;
  /** OpenTelemetry traces, from the standard OTEL_* variables; undefined = off (no OTLP endpoint set). */
  readonly tracing: TracingConfig | undefined;
  /** Worker threads that compile response schemas and check answers; undefined = the router's default. */
  readonly schemaWorkers?: number | undefined;
}

export type CliResult =
  | { readonly kind: 'run'; readonly options: GatewayOptions }
  | { readonly kind: 'help'; readonly text: string }
  | { readonly kind: 'error'; readonly message: string };

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 3025;
export const DEFAULT_MAX_BODY_BYTES = 20 * 1024 * 1024; // 20 MB
export const DEFAULT_SHUTDOWN_GRACE_MS = 25_000; // 25 s: below Kubernetes' default 30 s termination grace
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000; // 30 s to send a whole request (20 MB at ~1 MB/s)
export const DEFAULT_DATA_DIR = 'data'; // relative to the working directory
export const DEFAULT_USAGE_RETENTION_MS = 30 * 86_400_000; // 30 days
/** More schema workers than this is more threads than any machine this serves has cores to spare. */
export const MAX_SCHEMA_WORKERS = 32;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The aliases.yaml shipped next to the package (dist/../aliases.yaml). */
export const DEFAULT_CONFIG_PATH = fileURLToPath(new URL('../aliases.yaml', import.meta.url));

export const HELP_TEXT = `mana-llm-gateway — OpenAI-compatible LLM gateway with semantic aliases and failover

Usage: node dist/main.js [options]
       pnpm start [-- options]      (from the repository root)

Options (a flag wins over its environment variable):
  --config <path>        Alias config (YAML). Env MANA_LLM_CONFIG. A relative path is
                         taken from the directory the command was run in.
                         Default: the package's aliases.yaml.
  --host <address>       Listen address. Env HOST. Default ${DEFAULT_HOST}.
  --port <n>             Listen port (0 = any free port). Env PORT. Default ${DEFAULT_PORT}.
  --max-body <size>      Largest request body: bytes or 512kb / 20mb. Env MANA_LLM_MAX_BODY.
                         Default 20mb.
  --shutdown-grace <d>   Time SIGTERM/SIGINT lets in-flight requests and streams finish:
                         ms or 10s / 2m. Env MANA_LLM_SHUTDOWN_GRACE. Default 25s.
  --request-timeout <d>  Time a client may take to send a whole request (then 408): ms or 10s.
                         Env MANA_LLM_REQUEST_TIMEOUT. Default 30s.
  --log-level <level>    ${LOG_LEVELS.join(' | ')}. Env LOG_LEVEL. Default info.
  --cors-origins <list>  Origins a browser may call from (CORS), comma-separated, e.g.
                         https://app.example.com,http://localhost:5173; * = any.
                         Env MANA_LLM_CORS_ORIGINS. Default: none (CORS off).
  --usage <on|off>       Record usage: one record per request, with its attempts, tokens and
                         cost. Env MANA_LLM_USAGE. Default on.
  --data-dir <path>      Folder of the embedded database (usage.sqlite: usage, service keys), created on
                         first start. Env MANA_LLM_DATA_DIR. Default ./${DEFAULT_DATA_DIR}.
  --usage-retention <d>  How long usage records are kept: 12h, 30d. Env MANA_LLM_USAGE_RETENTION.
                         Default 30d.
  --replica-name <name>  This replica's name on its usage records and shared health rows
                         (with MANA_LLM_DATABASE_URL). Env MANA_LLM_REPLICA_NAME.
                         Default <hostname>:<port>.
  --schema-workers <n>   Threads that compile response schemas and check answers against them
                         (aliases with fail_over_on: [invalid_json]), 1 to ${MAX_SCHEMA_WORKERS}.
                         Env MANA_LLM_SCHEMA_WORKERS. Default: cores − 1, at least 2, at most ${SCHEMA_WORKERS_MAX_DEFAULT}.
  --insecure             Allow a non-loopback --host without API keys, and serve it without
                         auth while no key exists (a proxy in front does the auth).
  -h, --help             Show this text.

Secrets (environment only, so they never show in a process list):
  MANA_LLM_API_KEYS      Comma-separated bearer keys clients must send on /v1/*.
                         Unset and no service key = no auth (on a loopback address or with
                         --insecure); any other address requires a key even before one exists.
  MANA_LLM_ADMIN_KEY     Bearer key for /admin/* routes, where service keys are made
                         (POST /admin/keys). Unset = admin routes disabled.
  MANA_LLM_DATABASE_URL  postgres://… : keep usage in PostgreSQL instead of the data folder, and
                         share health, cooldowns and the config with every replica using it.
  Provider keys (GROQ_API_KEY, OPENROUTER_API_KEY, GOOGLE_API_KEY, TOGETHER_API_KEY) and
  OLLAMA_URL are read by the config file's \${VAR} references.

OpenTelemetry traces (environment only; off unless an endpoint is set):
  OTEL_EXPORTER_OTLP_ENDPOINT         OTLP/HTTP collector, e.g. http://localhost:4318 (spans go to
                                      <it>/v1/traces); OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the full URL.
  OTEL_EXPORTER_OTLP_PROTOCOL         http/protobuf (default) or http/json.
  OTEL_EXPORTER_OTLP_HEADERS          key=value,… sent with every export (e.g. a backend's API key).
  OTEL_SERVICE_NAME                   Default mana-llm-gateway. OTEL_RESOURCE_ATTRIBUTES: key=value,…
  OTEL_TRACES_SAMPLER(_ARG)           Default parentbased_always_on; parentbased_traceidratio + 0.1: 10 %.
  OTEL_SDK_DISABLED=true              Off, whatever else is set.

Signals: SIGHUP reloads the config; SIGTERM/SIGINT drain and exit 0.
`;

/** True for addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(?:\.\d{1,3}){3}$/.test(h) || h === '::ffff:127.0.0.1';
}

/**
 * The one rule of required auth: on an address other machines can reach, the
 * key check is on from the start, even while no key exists yet (or after the
 * last service key is deleted), unless --insecure says a proxy in front does
 * the auth. On loopback, or with --insecure, auth is on while any key exists.
 */
export function authRequired(host: string, insecure: boolean): boolean {
  return !isLoopbackHost(host) && !insecure;
}

function splitKeys(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k.length > 0);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** A numeric option: the flag's text, else the environment variable's (a flag wins), parsed; the default when neither is set. */
type NumberOption = { readonly ok: true; readonly value: number } | { readonly ok: false; readonly text: string };

function numberOption(
  flag: string | undefined,
  env: string | undefined,
  fallback: number,
  parse: (text: string) => number | undefined,
): NumberOption {
  const text = nonEmpty(flag) ?? nonEmpty(env);
  if (text === undefined) return { ok: true, value: fallback };
  const value = parse(text);
  return value === undefined ? { ok: false, text } : { ok: true, value };
}

/** Short and printable: it is stored on every usage record and shown in logs. */
const REPLICA_NAME = /^[A-Za-z0-9._:-]{1,100}$/;

function parsePort(text: string): number | undefined {
  return /^\d+$/.test(text) && Number(text) <= 65_535 ? Number(text) : undefined;
}

function parseSchemaWorkers(text: string): number | undefined {
  return /^\d+$/.test(text) && Number(text) >= 1 && Number(text) <= MAX_SCHEMA_WORKERS ? Number(text) : undefined;
}

/** A request timeout under 100 ms would time out requests still arriving at local speed. */
function parseRequestTimeout(text: string): number | undefined {
  const ms = parseDuration(text);
  return ms !== undefined && ms >= 100 ? ms : undefined;
}

/** The package name pnpm reports while running one of its scripts (`npm_package_name`). */
const PACKAGE_NAME = '@mana/llm-gateway';

/**
 * The directory a relative --config / MANA_LLM_CONFIG is taken from: where the
 * user typed the command. `pnpm start` (root script → `pnpm --filter … start`)
 * runs the process in this package's directory, so there the directory the
 * user ran pnpm in (INIT_CWD) is meant; run any other way (`node dist/main.js`,
 * a container), it is the process's own working directory.
 */
export function userDirectory(env: Record<string, string | undefined>, cwd: string): string {
  const viaStartScript = env.npm_lifecycle_event === 'start' && env.npm_package_name === PACKAGE_NAME;
  const initCwd = nonEmpty(env.INIT_CWD);
  return viaStartScript && initCwd !== undefined ? initCwd : cwd;
}

export function parseCli(argv: readonly string[], env: Record<string, string | undefined>, cwd: string = process.cwd()): CliResult {
  // `pnpm start -- --config x.yaml` hands the process `-- --config x.yaml`: the
  // separator is pnpm's, not a request to treat the options as positionals.
  const args = argv[0] === '--' ? argv.slice(1) : [...argv];
  let values;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        config: { type: 'string' },
        host: { type: 'string' },
        port: { type: 'string' },
        'max-body': { type: 'string' },
        'shutdown-grace': { type: 'string' },
        'request-timeout': { type: 'string' },
        'log-level': { type: 'string' },
        'cors-origins': { type: 'string' },
        usage: { type: 'string' },
        'data-dir': { type: 'string' },
        'usage-retention': { type: 'string' },
        'replica-name': { type: 'string' },
        'schema-workers': { type: 'string' },
        insecure: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (error) {
    return { kind: 'error', message: `${(error as Error).message}\nRun with --help to list the options.` };
  }
  if (values.help) return { kind: 'help', text: HELP_TEXT };

  const givenConfig = nonEmpty(values.config) ?? nonEmpty(env.MANA_LLM_CONFIG);
  const configPath =
    givenConfig === undefined ? DEFAULT_CONFIG_PATH : isAbsolute(givenConfig) ? givenConfig : resolve(userDirectory(env, cwd), givenConfig);
  const host = nonEmpty(values.host) ?? nonEmpty(env.HOST) ?? DEFAULT_HOST;

  const port = numberOption(values.port, env.PORT, DEFAULT_PORT, parsePort);
  if (!port.ok) return { kind: 'error', message: `Invalid port "${port.text}": expected an integer from 0 to 65535.` };
  const maxBody = numberOption(values['max-body'], env.MANA_LLM_MAX_BODY, DEFAULT_MAX_BODY_BYTES, parseSize);
  if (!maxBody.ok) {
    return { kind: 'error', message: `Invalid --max-body "${maxBody.text}": expected bytes or a size such as 512kb or 20mb.` };
  }
  const grace = numberOption(values['shutdown-grace'], env.MANA_LLM_SHUTDOWN_GRACE, DEFAULT_SHUTDOWN_GRACE_MS, parseDuration);
  if (!grace.ok) {
    return { kind: 'error', message: `Invalid --shutdown-grace "${grace.text}": expected ms or a duration such as 10s or 2m.` };
  }
  const requestTimeout = numberOption(values['request-timeout'], env.MANA_LLM_REQUEST_TIMEOUT, DEFAULT_REQUEST_TIMEOUT_MS, parseRequestTimeout);
  if (!requestTimeout.ok) {
    return {
      kind: 'error',
      message: `Invalid --request-timeout "${requestTimeout.text}": expected a duration of at least 100ms, such as 30s.`,
    };
  }

  const logLevel = (nonEmpty(values['log-level']) ?? nonEmpty(env.LOG_LEVEL) ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    return { kind: 'error', message: `Invalid log level "${logLevel}": expected one of ${LOG_LEVELS.join(', ')}.` };
  }

  const corsOrigins: string[] = [];
  for (const entry of splitKeys(nonEmpty(values['cors-origins']) ?? env.MANA_LLM_CORS_ORIGINS)) {
    const origin = normalizeOrigin(entry);
    if (origin === undefined) {
      return {
        kind: 'error',
        message: `Invalid --cors-origins entry "${entry.slice(0, 200)}": expected an origin such as https://app.example.com (scheme, host, optional port; no path) or *.`,
      };
    }
    corsOrigins.push(origin);
  }
  const usageText = (nonEmpty(values.usage) ?? nonEmpty(env.MANA_LLM_USAGE) ?? 'on').toLowerCase();
  if (usageText !== 'on' && usageText !== 'off') return { kind: 'error', message: `Invalid --usage "${usageText}": expected on or off.` };
  // NaN stands for "not given": the config's usage_retention (or the default) applies then.
  const retention = numberOption(values['usage-retention'], env.MANA_LLM_USAGE_RETENTION, NaN, parseDuration);
  if (!retention.ok || (!Number.isNaN(retention.value) && retention.value < 60_000)) {
    return { kind: 'error', message: `Invalid --usage-retention "${retention.ok ? retention.value : retention.text}": expected a duration of at least 1m, such as 30d.` };
  }
  const dataDir = nonEmpty(values['data-dir']) ?? nonEmpty(env.MANA_LLM_DATA_DIR) ?? DEFAULT_DATA_DIR;
  const databaseUrl = nonEmpty(env.MANA_LLM_DATABASE_URL);
  if (databaseUrl !== undefined && !/^postgres(?:ql)?:\/\//i.test(databaseUrl)) {
    return { kind: 'error', message: 'Invalid MANA_LLM_DATABASE_URL: expected a postgres:// or postgresql:// URL.' };
  }

  const replicaName = nonEmpty(values['replica-name']) ?? nonEmpty(env.MANA_LLM_REPLICA_NAME);
  if (replicaName !== undefined && !REPLICA_NAME.test(replicaName)) {
    return { kind: 'error', message: `Invalid --replica-name "${replicaName.slice(0, 100)}": expected 1–100 letters, digits and . _ : - characters.` };
  }

  // NaN stands for "not given": the router's default applies then.
  const schemaWorkers = numberOption(values['schema-workers'], env.MANA_LLM_SCHEMA_WORKERS, NaN, parseSchemaWorkers);
  if (!schemaWorkers.ok) {
    return { kind: 'error', message: `Invalid --schema-workers "${schemaWorkers.text.slice(0, 100)}": expected a whole number from 1 to ${MAX_SCHEMA_WORKERS}.` };
  }

  const tracing = tracingConfig(env);
  if (!tracing.ok) return { kind: 'error', message: tracing.message };

  const apiKeys = splitKeys(env.MANA_LLM_API_KEYS);
  const adminKey = nonEmpty(env.MANA_LLM_ADMIN_KEY);
  const insecure = values.insecure === true;

  const required = authRequired(host, insecure);
  const recordUsage = usageText === 'on';
  // Service keys are made through the admin API (stored with or without usage recording).
  const canMakeServiceKeys = adminKey !== undefined;
  if (required && apiKeys.length === 0 && !canMakeServiceKeys) {
    return {
      kind: 'error',
      message:
        `Refusing to listen on ${host} without API keys: anyone who can reach that address could ` +
        `send requests billed to your provider keys. Set MANA_LLM_API_KEYS=key1,key2, or set ` +
        `MANA_LLM_ADMIN_KEY and create service keys through POST /admin/keys ` +
        `(every request is refused until one exists), listen on a loopback address (--host 127.0.0.1), ` +
        `or pass --insecure if a proxy in front does the auth.`,
    };
  }

  return {
    kind: 'run',
    options: {
      configPath,
      host,
      port: port.value,
      apiKeys,
      adminKey,
      logLevel,
      maxBodyBytes: maxBody.value,
      shutdownGraceMs: grace.value,
      requestTimeoutMs: requestTimeout.value,
      insecure,
      authRequired: required,
      corsOrigins,
      recordUsage,
      dataDir,
      databaseUrl,
      usageRetentionMs: Number.isNaN(retention.value) ? undefined : retention.value,
      replicaName,
      tracing: tracing.config,
      schemaWorkers: Number.isNaN(schemaWorkers.value) ? undefined : schemaWorkers.value,
    },
  };
}
