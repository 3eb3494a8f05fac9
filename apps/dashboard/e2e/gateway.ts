/**
 * The real gateway process (its build, `apps/llm-gateway/dist/main.js`) in
 * front of testkit fake upstreams on loopback, for the browser tests.
 */
import { fileURLToPath } from 'node:url';
import { startGatewayProcess, type GatewayProcess } from '@mana/llm-testkit';

export const GATEWAY_MAIN = fileURLToPath(new URL('../../llm-gateway/dist/main.js', import.meta.url));
export const ADMIN_KEY = 'dashboard-admin-key-e2e-4f7q';

export async function startGateway(config: string, env: Record<string, string> = {}): Promise<GatewayProcess> {
  return startGatewayProcess({
    mainPath: GATEWAY_MAIN,
    missingHint: 'build first (pnpm turbo run build --filter=@mana/llm-gateway...)',
    tempPrefix: 'mana-dashboard-e2e-',
    config,
    args: ['--shutdown-grace', '2s'],
    env: { LOG_LEVEL: 'info', MANA_LLM_ADMIN_KEY: ADMIN_KEY, ...env },
  });
}

/** The aliases @mana/llm-aliases requires, each with `chain` (a YAML flow list), plus `extra` YAML under `aliases:`. */
export function requiredAliases(chain: string, extra = ''): string {
  const names = ['mana/fast-text', 'mana/long-form', 'mana/structured', 'mana/reasoning', 'mana/vision'];
  const lines = ['aliases:'];
  for (const name of names) lines.push(`  ${name}:`, `    description: "${name} for the dashboard tests"`, `    chain: ${chain}`);
  lines.push('  mana/embed:', '    description: embeddings', '    kind: embedding', '    embedding_space: test-space', `    chain: ${chain}`);
  return `${lines.join('\n')}\n${extra}`;
}

/** A chat completion through the gateway (no API keys configured); resolves to the status. */
export async function chat(url: string, model: string): Promise<number> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] }),
  });
  await res.text();
  return res.status;
}

/** Resolves once `check` returns true (polled every 100 ms); rejects after `timeoutMs` naming `what`. */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
