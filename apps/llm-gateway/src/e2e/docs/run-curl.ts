/**
 * Runs one docs `curl` command against the gateway: with the real `curl`
 * binary when the machine has one (what a reader runs), else as the `fetch`
 * that the same arguments describe. Either way the result is what curl would
 * print (the response head first with `-D -` or `-i`) and the status.
 */
import { execFile, execFileSync } from 'node:child_process';

export type CurlMode = 'binary' | 'fetch';

export interface CurlResult {
  readonly status: number;
  /** The response head's lines when the command asked curl to print it (`-D -`, `-i`). */
  readonly head: readonly string[] | undefined;
  readonly body: string;
}

/** Each docs request is bounded: a hanging example fails instead of holding the test. */
const MAX_TIME_S = 10;

export function curlAvailable(): boolean {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore', timeout: 5_000 });
    return true;
  } catch {
    return false;
  }
}

/** The options docs examples use; anything else fails the example (it would not run the same as fetch). */
interface CurlRequest {
  url: string;
  method: string;
  headers: [string, string][];
  body: string | undefined;
  printHead: boolean;
}

export function parseCurlArgs(args: readonly string[]): CurlRequest {
  let url: string | undefined;
  let method: string | undefined;
  const headers: [string, string][] = [];
  const data: string[] = [];
  let printHead = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const value = (): string => {
      const v = args[++i];
      if (v === undefined) throw new Error(`curl ${arg} needs a value`);
      return v;
    };
    if (['-s', '--silent', '-S', '--show-error', '-N', '--no-buffer'].includes(arg)) continue;
    if (arg === '-X' || arg === '--request') method = value();
    else if (arg === '-H' || arg === '--header') {
      const header = value();
      const colon = header.indexOf(':');
      if (colon < 1) throw new Error(`curl header without a name: ${header}`);
      headers.push([header.slice(0, colon).trim(), header.slice(colon + 1).trim()]);
    } else if (arg === '-d' || arg === '--data' || arg === '--data-raw') data.push(value());
    else if (arg === '-D' || arg === '--dump-header') {
      if (value() !== '-') throw new Error('docs examples dump headers to stdout only (-D -)');
      printHead = true;
    } else if (arg === '-i' || arg === '--include') printHead = true;
    else if (arg.startsWith('-')) throw new Error(`curl option ${arg} is not supported by the docs tests`);
    else if (url === undefined) url = arg;
    else throw new Error(`curl with two URLs: ${url} ${arg}`);
  }
  if (url === undefined) throw new Error('curl without a URL');
  const body = data.length === 0 ? undefined : data.join('&');
  // curl's own defaults: -d means POST, and form data unless a Content-Type is given.
  if (body !== undefined && !headers.some(([name]) => name.toLowerCase() === 'content-type')) {
    headers.push(['Content-Type', 'application/x-www-form-urlencoded']);
  }
  return { url, method: method ?? (body === undefined ? 'GET' : 'POST'), headers, body, printHead };
}

export async function runCurl(args: readonly string[], mode: CurlMode): Promise<CurlResult> {
  const request = parseCurlArgs(args); // checked in both modes, so both run the same examples
  return mode === 'binary' ? viaBinary(args, request.printHead) : viaFetch(request);
}

function viaBinary(args: readonly string[], printHead: boolean): Promise<CurlResult> {
  // %{stderr} sends the status to stderr, so stdout stays exactly what the reader sees.
  const argv = [...args, '--max-time', String(MAX_TIME_S), '--write-out', '%{stderr}%{http_code}'];
  return new Promise((resolve, reject) => {
    execFile('curl', argv, { timeout: (MAX_TIME_S + 5) * 1000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`curl failed: ${error.message}\n${stderr}`));
      const status = Number(stderr.trim());
      if (!printHead) return resolve({ status, head: undefined, body: stdout });
      const { head, body } = splitHead(stdout);
      resolve({ status, head, body });
    });
  });
}

/** The last response head (after any `100 Continue`) and the body behind it. */
function splitHead(output: string): { head: string[]; body: string } {
  let rest = output;
  let head: string[] = [];
  while (rest.startsWith('HTTP/')) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) break;
    head = rest.slice(0, end).split('\r\n');
    rest = rest.slice(end + 4);
  }
  return { head, body: rest };
}

async function viaFetch(request: CurlRequest): Promise<CurlResult> {
  const res = await fetch(request.url, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    redirect: 'manual',
    signal: AbortSignal.timeout(MAX_TIME_S * 1000),
  });
  const body = await res.text();
  const head = request.printHead ? [`HTTP/1.1 ${res.status} ${res.statusText}`, ...[...res.headers].map(([k, v]) => `${k}: ${v}`)] : undefined;
  return { status: res.status, head, body };
}
