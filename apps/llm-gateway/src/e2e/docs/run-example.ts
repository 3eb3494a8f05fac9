/**
 * Runs a docs shell example the way a reader pastes it into a terminal:
 * assignments set variables, each `curl` is run (see run-curl.ts) and its
 * answer checked against the comments under it (see expectations.ts), and
 * `NAME=$(curl … | jq -r PATH)` takes a value from an answer for the commands
 * after it. Every URL a command would call must be on loopback.
 */
import { expectationOf, mismatches } from './expectations.js';
import { runCurl, type CurlMode } from './run-curl.js';
import { literal, parseScript, type ShellCommand, type Word } from './shell-script.js';

export interface CommandReport {
  /** 1-based line within the block. */
  readonly line: number;
  readonly command: string;
  readonly problems: readonly string[];
}

export type Vars = Map<string, string>;

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=/;

/**
 * Runs `script` with `vars` as the shell's variables; assignments change them,
 * so blocks of one page run with one map see each other's variables, as in
 * one terminal.
 */
export async function runShellExample(script: string, vars: Vars, mode: CurlMode): Promise<CommandReport[]> {
  const reports: CommandReport[] = [];
  for (const command of parseScript(script)) {
    const shown = script.split('\n')[command.line - 1]!.trim();
    try {
      reports.push({ line: command.line, command: shown, problems: await runCommand(command, vars, mode) });
    } catch (error) {
      reports.push({ line: command.line, command: shown, problems: [(error as Error).message] });
    }
  }
  return reports;
}

async function runCommand(command: ShellCommand, vars: Vars, mode: CurlMode): Promise<string[]> {
  if (command.stages.length > 1) throw new Error('a pipe is only supported as NAME=$(curl … | jq -r PATH)');
  const words = command.stages[0]!;
  const first = words[0]!;
  const head = first[0];
  if (head?.kind === 'text' && ASSIGNMENT.test(head.text) && words.every((w) => w[0]?.kind === 'text' && ASSIGNMENT.test(w[0].text))) {
    for (const word of words) {
      const text = (word[0] as { text: string }).text;
      const name = ASSIGNMENT.exec(text)![1]!;
      const rest: Word = [{ kind: 'text', text: text.slice(name.length + 1) }, ...word.slice(1)];
      vars.set(name, await expand(rest, vars, mode));
    }
    return [];
  }
  if (literal(first) !== 'curl') throw new Error(`only curl and NAME=value run in a docs example, not ${literal(first) ?? 'this'}`);
  const args = await Promise.all(words.slice(1).map((w) => expand(w, vars, mode)));
  const offLoopback = args.flatMap((a) => [...a.matchAll(/\bhttps?:\/\/([^/:"'\s]+|\[[^\]]+\])/g)].map((m) => m[1]!)).filter((host) => !isLoopback(host));
  if (offLoopback.length > 0) throw new Error(`would call ${offLoopback.join(', ')}: tests reach loopback only (give it a stand-in)`);
  const printsHead = args.includes('-i') || args.includes('--include') || args.some((a, i) => (a === '-D' || a === '--dump-header') && args[i + 1] === '-');
  const result = await runCurl(args, mode);
  return mismatches(expectationOf(command.comments, printsHead), result);
}

function isLoopback(host: string): boolean {
  return host === '127.0.0.1' || host === 'localhost' || host === '[::1]';
}

async function expand(word: Word, vars: Vars, mode: CurlMode): Promise<string> {
  let out = '';
  for (const part of word) {
    if (part.kind === 'text') out += part.text;
    else if (part.kind === 'var') out += vars.get(part.name) ?? '';
    else out += await substitute(part.script, vars, mode);
  }
  return out;
}

/** `$(curl … | jq -r PATH)`: the value at PATH of the curl's JSON answer. */
async function substitute(script: string, vars: Vars, mode: CurlMode): Promise<string> {
  const commands = parseScript(script);
  const stages = commands[0]?.stages ?? [];
  const jq = stages[1]?.map(literal);
  if (commands.length !== 1 || stages.length !== 2 || literal(stages[0]![0]!) !== 'curl' || jq?.[0] !== 'jq' || jq[1] !== '-r' || jq[2] === undefined || jq.length !== 3) {
    throw new Error(`$(${script}): only $(curl … | jq -r PATH) is supported`);
  }
  const args = await Promise.all(stages[0]!.slice(1).map((w) => expand(w, vars, mode)));
  const result = await runCurl(args, mode);
  if (result.status < 200 || result.status > 299) throw new Error(`$(${script.trim()}): status ${result.status}: ${result.body.slice(0, 500)}`);
  const value = jqPath(JSON.parse(result.body), jq[2]);
  if (value === undefined || value === null) throw new Error(`$(${script.trim()}): ${jq[2]} is ${value} in ${result.body.slice(0, 500)}`);
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** jq paths of the form `.a.b[0].c`. */
function jqPath(value: unknown, path: string): unknown {
  if (!/^(\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])+$/.test(path)) throw new Error(`jq path ${path}: only .key and [index] are supported`);
  let current = value;
  for (const m of path.matchAll(/\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]/g)) {
    if (current === null || typeof current !== 'object') return undefined;
    current = m[1] !== undefined ? (current as Record<string, unknown>)[m[1]] : (current as unknown[])[Number(m[2])];
  }
  return current;
}
