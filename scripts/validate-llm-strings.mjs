#!/usr/bin/env node
/**
 * Fails when product code or config names a concrete provider model
 * (`ollama/gemma3:12b`) instead of a MANA_LLM alias. The twin of the ESLint rule
 * @mana/llm/no-raw-model-string for every file type, not only JS/TS.
 *
 *   node scripts/validate-llm-strings.mjs [--root DIR]... [--config FILE] [--prefix NAME]... [--allow REGEX]...
 *
 * Exit codes: 0 clean, 1 findings, 2 usage or configuration error.
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  DEFAULT_ROOTS,
  UsageError,
  findAliasConfig,
  loadAliasConfig,
  scanLlmStrings,
} from './lib/scan-llm-strings.mjs';

const USAGE = `usage: validate-llm-strings [--root DIR]... [--config FILE] [--prefix NAME]... [--allow REGEX]...
  --root DIR     directory to scan (repeatable; default: apps, services, packages — the missing ones skipped)
  --config FILE  gateway alias config used for suggestions (default: nearest apps/llm-gateway/aliases.yaml)
  --prefix NAME  extra provider prefix to treat as raw (repeatable)
  --allow REGEX  model strings matching this pattern are allowed (repeatable)`;

function parseArgs(argv) {
  const args = { roots: [], config: undefined, prefixes: [], allow: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? arg.split(/=(.*)/s, 2) : [arg, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '') throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--root':
        args.roots.push(value());
        break;
      case '--config':
        args.config = value();
        break;
      case '--prefix':
        args.prefixes.push(value());
        break;
      case '--allow': {
        const source = value();
        try {
          args.allow.push(new RegExp(source, 'u'));
        } catch (error) {
          throw new UsageError(`--allow ${source}: ${error.message}`);
        }
        break;
      }
      case '-h':
      case '--help':
        args.help = true;
        break;
      default:
        throw new UsageError(`unknown argument: ${arg}`);
    }
  }
  return args;
}

async function main() {
  const started = performance.now();
  const args = parseArgs(process.argv.slice(2));
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  const base = process.cwd();
  const configFile = args.config !== undefined ? path.resolve(base, args.config) : findAliasConfig(base);
  const aliasIndex = configFile === undefined ? undefined : loadAliasConfig(configFile);
  const explicitRoots = args.roots.length > 0;
  const { scanned, findings } = await scanLlmStrings({
    roots: explicitRoots ? args.roots : DEFAULT_ROOTS,
    requireRoots: explicitRoots,
    base,
    extraPrefixes: args.prefixes,
    allow: args.allow,
    aliasIndex,
  });
  const ms = Math.round(performance.now() - started);

  for (const finding of findings) {
    const advice = finding.suggestion ? `use MANA_LLM.${finding.suggestion.key}` : 'use a MANA_LLM alias';
    console.log(`${finding.path}:${finding.line}:${finding.column}  '${finding.value}'  → ${advice}`);
  }
  if (findings.length === 0) {
    console.log(`validate-llm-strings: no raw provider model strings in ${scanned} files (${ms} ms)`);
    return 0;
  }
  const fileCount = new Set(findings.map((f) => f.path)).size;
  console.log(
    `validate-llm-strings: ${findings.length} raw provider model string${findings.length === 1 ? '' : 's'} in ${fileCount} file${fileCount === 1 ? '' : 's'} ` +
      `(${scanned} files scanned in ${ms} ms). Name a MANA_LLM alias from @mana/llm-aliases instead.`,
  );
  return 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    if (error instanceof UsageError) {
      console.error(`validate-llm-strings: ${error.message}`);
      console.error(USAGE);
    } else {
      console.error('validate-llm-strings: unexpected error');
      console.error(error);
    }
    process.exitCode = 2;
  },
);
