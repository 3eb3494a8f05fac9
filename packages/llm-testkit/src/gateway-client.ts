/**
 * What every suite that drives a built gateway needs beside the process itself
 * (`startGatewayProcess`): the aliases @mana/llm-aliases requires written as
 * YAML, one chat completion, and a bounded wait for a condition. The gateway's
 * e2e tests and the dashboard's browser tests share these.
 */

/** The vector space `aliasesYaml` gives `mana/embed`. */
export const TEST_EMBEDDING_SPACE = 'test-space';

/** The required aliases, each with the given chain (YAML flow list items); `mana/embed` is an embedding alias. */
export function aliasesYaml(chains: Record<string, readonly string[]>, fallbackChain: readonly string[]): string {
  const names = ['mana/fast-text', 'mana/long-form', 'mana/structured', 'mana/reasoning', 'mana/vision', 'mana/embed', ...Object.keys(chains)];
  const lines = ['aliases:'];
  for (const name of new Set(names)) {
    const chain = chains[name] ?? fallbackChain;
    lines.push(`  ${name}:`, `    description: "${name} (test)"`);
    if (name === 'mana/embed') lines.push('    kind: embedding', `    embedding_space: ${TEST_EMBEDDING_SPACE}`);
    lines.push('    chain:');
    for (const t of chain) lines.push(`      - ${t}`);
  }
  return lines.join('\n') + '\n';
}

/** One non-stream chat completion to `model` on a gateway without API keys; the body is read (and dropped). */
export async function chatOnce(url: string, model: string): Promise<Response> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.text();
  return res;
}

/** Resolves once `check` returns true (polled every 100 ms); rejects after `timeoutMs` naming `what`. */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
