/**
 * What a docs `curl` example says it answers, read from the comments right
 * after it, and the check of a real answer against that:
 *
 *   # → 201 {"name": "mana/team", "chain": […], …}   status (optional, else any 2xx) and shape
 *   #    "version": "…"}                              an indented line continues the one above
 *   # HTTP/1.1 200 OK                                 with -D - / -i: the status line
 *   # x-mana-llm-alias: mana/fast-text                with -D - / -i: a header (its value unless it has …)
 *
 * The shape of a JSON answer is its keys: every `"key":` the comment shows is
 * somewhere in the answer, and `object` and `code` have the value shown. Values
 * that differ from run to run (ids, times, versions) are written with `…`.
 * A text answer (SSE, Prometheus) contains each shown line up to its first `…`.
 */
import type { CurlResult } from './run-curl.js';

export interface Expectation {
  /** The status the comments name; undefined: any 2xx. */
  readonly status: number | undefined;
  readonly headers: readonly { readonly name: string; readonly value: string | undefined }[];
  /** Each `# →` answer, continuation lines joined. */
  readonly answers: readonly string[];
}

const ELLIPSIS = '…';

export function expectationOf(comments: readonly string[], printsHead: boolean): Expectation {
  let status: number | undefined;
  const headers: { name: string; value: string | undefined }[] = [];
  const answers: string[] = [];
  let inAnswer = false;
  for (const comment of comments) {
    const arrow = /^\s*→\s?(.*)$/.exec(comment);
    if (arrow) {
      let text = arrow[1]!;
      const code = /^(\d{3})\b\s*/.exec(text);
      if (code) {
        status = Number(code[1]);
        text = text.slice(code[0].length);
      }
      answers.push(text);
      inAnswer = true;
      continue;
    }
    if (inAnswer && /^\s{2,}\S/.test(comment)) {
      answers[answers.length - 1] += ` ${comment.trim()}`;
      continue;
    }
    inAnswer = false;
    if (!printsHead) continue;
    const statusLine = /^\s*HTTP\/[\d.]+ (\d{3})\b/.exec(comment);
    if (statusLine) {
      status = Number(statusLine[1]);
      continue;
    }
    const header = /^\s*([A-Za-z][A-Za-z0-9-]*): (.*)$/.exec(comment);
    if (header) headers.push({ name: header[1]!.toLowerCase(), value: header[2]!.includes(ELLIPSIS) ? undefined : header[2]!.trim() });
  }
  return { status, headers, answers };
}

/** Problems of a real answer against what the docs say (empty: it matches). */
export function mismatches(expected: Expectation, result: CurlResult): string[] {
  const problems: string[] = [];
  if (expected.status === undefined ? result.status < 200 || result.status > 299 : result.status !== expected.status) {
    problems.push(`status ${result.status}, the docs say ${expected.status ?? '2xx'}`);
  }
  if (expected.headers.length > 0) {
    const head = new Map((result.head ?? []).slice(1).map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] as const;
    }));
    for (const { name, value } of expected.headers) {
      const actual = head.get(name);
      if (actual === undefined) problems.push(`no ${name} header`);
      else if (value !== undefined && actual !== value) problems.push(`${name}: ${actual}, the docs say ${value}`);
    }
  }
  const json = parseJson(result.body);
  for (const answer of expected.answers) {
    const keys = [...new Set([...answer.matchAll(/"([^"]+)"\s*:/g)].map((m) => m[1]!))];
    const fixed = [...answer.matchAll(/"(object|code)"\s*:\s*"([^"…]*)"/g)].map((m) => [m[1]!, m[2]!] as const);
    if (json !== undefined) {
      const present = keysOf(json);
      for (const key of keys) if (!present.has(key)) problems.push(`no "${key}" in the answer`);
      for (const [key, value] of fixed) if (!valuesOf(json, key).has(value)) problems.push(`"${key}" is not "${value}" in the answer`);
    } else if (keys.length > 0) {
      for (const key of keys) if (!result.body.includes(`"${key}":`)) problems.push(`no "${key}" in the answer`);
      for (const [key, value] of fixed) if (!result.body.includes(`"${key}":"${value}"`)) problems.push(`"${key}" is not "${value}" in the answer`);
    } else {
      const shown = answer.split(ELLIPSIS)[0]!.trim();
      if (shown !== '' && !result.body.includes(shown)) problems.push(`the answer does not contain ${shown}`);
    }
  }
  if (problems.length > 0) problems.push(`answer: ${result.body.slice(0, 1_000)}`);
  return problems;
}

function parseJson(text: string): unknown {
  if (!/^\s*[[{]/.test(text)) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function keysOf(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) keysOf(item, out);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      out.add(key);
      keysOf(item, out);
    }
  }
  return out;
}

function valuesOf(value: unknown, key: string, out = new Set<unknown>()): Set<unknown> {
  if (Array.isArray(value)) for (const item of value) valuesOf(item, key, out);
  else if (typeof value === 'object' && value !== null) {
    for (const [k, item] of Object.entries(value)) {
      if (k === key) out.add(item);
      valuesOf(item, key, out);
    }
  }
  return out;
}
