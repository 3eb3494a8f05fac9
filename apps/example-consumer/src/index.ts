#!/usr/bin/env node
/**
 * Example product code: `node dist/index.js "some long text"` summarises the text
 * through the gateway (MANA_LLM_URL, default http://127.0.0.1:3025/v1) and says
 * which provider model answered.
 */
import { pathToFileURL } from 'node:url';
import { createGatewayClient } from './gateway-client.js';
import { summarise } from './summarise.js';

export { createGatewayClient, DEFAULT_GATEWAY_URL, RESOLVED_HEADER } from './gateway-client.js';
export { summarise, type Summary } from './summarise.js';

async function main(): Promise<void> {
  const text = process.argv.slice(2).join(' ') || 'The Mana gateway resolves semantic aliases to provider models.';
  const summary = await summarise(createGatewayClient(), text);
  console.log(summary.text);
  console.log(`(asked for ${summary.requested}; answered by ${summary.resolvedModel ?? 'an unnamed model'})`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
