/**
 * Finds raw provider model strings in a source tree: the engine behind
 * validate-llm-strings.mjs. The pattern and prefixes come from
 * @mana/llm-aliases (its built dist) — the same definition the ESLint rule uses —
 * and the alias config is located by the plugin's `findAliasConfig`.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { PROVIDER_PREFIXES, aliasSuggestionIndex, rawModelPattern, rawModelPrefixPattern } from '@mana/llm-aliases';
import fg from 'fast-glob';
import { parse } from 'yaml';
import { extractStrings, familyOf } from './extract-strings.mjs';

export const DEFAULT_ROOTS = ['apps', 'services', 'packages'];
// Where the alias config lives and how to find it: the ESLint plugin's own helper
// (its built dist), so the script and the rule always look in the same place.
export { DEFAULT_ALIAS_CONFIG, findAliasConfig } from '@mana/eslint-plugin-llm/alias-config';

const SOURCE_GLOBS = ['**/*.{ts,tsx,mts,cts,js,jsx,mjs,cjs,svelte,vue,py,json,yaml,yml}', '**/.env*'];

/** Never scanned: dependencies, build output, caches (directory names: pruned, not walked). */
const IGNORED = ['**/{node_modules,dist,build,.turbo,coverage,.svelte-kit,.next,.git,__pycache__,.venv}'];

/**
 * Paths (relative to the working directory, `/`-separated) where raw provider
 * strings are legitimate: the gateway's alias config and its tests, fixtures and
 * docs; the router and testkit, which resolve and fake provider models; the tests
 * of @mana/llm-aliases (which owns the pattern) and of this lint gate, and its corpus. Keep in step with the rule ignores in eslint.config.js.
 */
export const ALLOW_LIST = [
  /^apps\/llm-gateway\/(?:.*\/)?[^/]+\.ya?ml$/,
  /^apps\/llm-gateway\/(?:.*\/)?(?:test|tests|__tests__|fixtures|__fixtures__|docs)\//,
  /^apps\/llm-gateway\/.*\.(?:test|spec)\.[cm]?[jt]sx?$/,
  /^apps\/dashboard\/e2e\//,
  /^packages\/llm-router\//,
  /^packages\/llm-testkit\//,
  /^packages\/llm-aliases\/.*\.test\.[cm]?[jt]sx?$/,
  /^packages\/llm-usage-store\/src\/(?:.*\.test\.[cm]?[jt]sx?|test-records\.ts)$/,
  /^packages\/eslint-plugin-llm\/test-corpus\//,
  /^packages\/eslint-plugin-llm\/.*\.test\.[cm]?[jt]sx?$/,
];

/** A usage or configuration problem: the CLI exits 2 with this message. */
export class UsageError extends Error {
  name = 'UsageError';
}

/** Reads the alias config into "model → suggestion"; throws UsageError naming the file. */
export function loadAliasConfig(file) {
  let text;
  try {
    if (!statSync(file).isFile()) throw new Error('not a regular file');
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the alias config ${file}: ${error.message}`);
  }
  let document;
  try {
    document = parse(text);
  } catch (error) {
    throw new UsageError(`the alias config ${file} is not valid YAML: ${error.message.split('\n')[0]}`);
  }
  try {
    return aliasSuggestionIndex(document);
  } catch (error) {
    throw new UsageError(`the alias config ${file} is unusable: ${error.message}`);
  }
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** 1-based line and column of `offset` (columns count UTF-16 units, as ESLint does). */
function position(text, offset) {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * Scans `roots` (absolute or relative to `base`) and returns the findings.
 * @param {{ roots: string[], base: string, extraPrefixes?: string[], allow?: RegExp[],
 *           aliasIndex?: ReadonlyMap<string, {alias: string, key: string}>, requireRoots?: boolean }} options
 */
export async function scanLlmStrings(options) {
  const { base, extraPrefixes = [], allow = [], aliasIndex } = options;
  const whole = rawModelPattern(extraPrefixes);
  const head = rawModelPrefixPattern(extraPrefixes);
  // Cheap pre-filter built from the same prefix list: most files never mention `provider/`.
  const mention = new RegExp(`(?:${[...PROVIDER_PREFIXES, ...extraPrefixes].map(escapeRegExp).join('|')})(?:/|\\\\/)`);

  const roots = [];
  for (const root of options.roots) {
    const absolute = path.resolve(base, root);
    if (existsSync(absolute) && statSync(absolute).isDirectory()) roots.push(absolute);
    else if (options.requireRoots) throw new UsageError(`root directory not found: ${root}`);
  }
  const found = await Promise.all(
    roots.map((cwd) => fg(SOURCE_GLOBS, { cwd, dot: true, ignore: IGNORED, onlyFiles: true, absolute: true })),
  );
  const files = [];
  for (const file of new Set(found.flat())) {
    const relative = path.relative(base, file).split(path.sep).join('/');
    if (!ALLOW_LIST.some((pattern) => pattern.test(relative))) files.push({ file, relative });
  }

  // Synchronous reads: for thousands of small files they beat fs/promises by several times.
  const findings = [];
  for (const { file, relative } of files) {
    let text;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read ${relative}: ${error.message}`);
    }
    if (!mention.test(text)) continue;
    for (const candidate of extractStrings(text, familyOf(file))) {
      if (candidate.moduleSpecifier) continue;
      const { value, kind } = candidate;
      if (kind === 'whole' ? !whole.test(value) : !head.test(value)) continue;
      const shown = kind === 'whole' ? value : `${value}\${…}`;
      if (allow.some((pattern) => pattern.test(shown))) continue;
      const suggestion = kind === 'whole' ? aliasIndex?.get(value) : undefined;
      findings.push({ path: relative, ...position(text, candidate.offset), value: shown, suggestion });
    }
  }

  findings.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line || a.column - b.column));
  return { scanned: files.length, findings };
}
