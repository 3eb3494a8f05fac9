#!/usr/bin/env node
/**
 * Checks the gateway's alias config the way the gateway will load it: with
 * @mana/llm-router's parseConfig (the built package), which also requires every
 * MANA_LLM alias to be defined.
 *
 *   node scripts/validate-alias-config.mjs [FILE]   (default: apps/llm-gateway/aliases.yaml)
 *
 * Exit codes: 0 valid, 1 invalid (the router's message names file, line and alias),
 * 2 usage error or unreadable file.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isRouterError, parseConfig } from '@mana/llm-router';

const DEFAULT_FILE = path.join('apps', 'llm-gateway', 'aliases.yaml');

function main(argv) {
  if (argv.length > 1 || argv[0]?.startsWith('-')) {
    console.error('usage: validate-alias-config [FILE]   (default: apps/llm-gateway/aliases.yaml)');
    return 2;
  }
  const file = argv[0] ?? DEFAULT_FILE;
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    console.error(`validate-alias-config: cannot read ${file}: ${error.message}`);
    return 2;
  }

  let snapshot;
  try {
    // Keys stay unset on purpose: a provider without its key is "unconfigured", not invalid.
    snapshot = parseConfig(text, { source: file, env: process.env });
  } catch (error) {
    if (!isRouterError(error)) throw error;
    console.error(`validate-alias-config: ${error.message}`);
    return 1;
  }

  const targets = [...snapshot.aliases.values()].reduce((sum, alias) => sum + alias.chain.length, 0);
  console.log(
    `validate-alias-config: ${file} is valid: ${snapshot.aliases.size} aliases, ${targets} chain targets, ${snapshot.providers.size} providers`,
  );
  return 0;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (error) {
  console.error('validate-alias-config: unexpected error');
  console.error(error);
  process.exitCode = 2;
}
