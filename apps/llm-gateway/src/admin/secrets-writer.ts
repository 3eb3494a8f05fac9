/**
 * How an API key sent through the admin API is stored: never in the YAML.
 * A reference the router expands (`${NAME}` or `${NAME:-default}`, see its
 * `envReferenceName`) is written as sent, LiteLLM's `os.environ/NAME` as
 * `${NAME}`; a literal key goes to the secrets file beside the config (mode
 * 0600, read by the router's loader) under a generated name, and the YAML
 * refers to that name. The file format is the router's (`NAME=value` lines).
 */
import { SECRET_NAME, envReferenceName, secretsPathFor } from '@mana/llm-router';
import { writeFileAtomic } from './atomic-write.js';

/** Longest API key accepted: 4 KB (real keys are under 200 bytes). */
export const MAX_API_KEY_BYTES = 4096;

export type StoredKey =
  | { readonly kind: 'reference'; readonly yaml: string }
  | { readonly kind: 'secret'; readonly yaml: string; readonly name: string; readonly value: string }
  | { readonly kind: 'invalid'; readonly reason: string };

const LITELLM_REFERENCE = /^os\.environ\/([A-Za-z_][A-Za-z0-9_]*)$/;

/** The secrets-file name of a provider's literal key: `local-vllm` → `MANA_LLM_SECRET_LOCAL_VLLM_API_KEY`. */
export function secretNameFor(provider: string): string {
  return `MANA_LLM_SECRET_${provider.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_API_KEY`;
}

/** Decides how `key` (as sent) is stored for `provider`. The reason of an invalid key never quotes it. */
export function storeApiKey(provider: string, key: string): StoredKey {
  // Checked before the reference test: a `${NAME:-default}` carries a default that must fit these bounds too.
  if (Buffer.byteLength(key) > MAX_API_KEY_BYTES) return { kind: 'invalid', reason: `api_key is longer than ${MAX_API_KEY_BYTES} bytes` };
  if (key.trim() === '' || /[\x00-\x1f\x7f]/.test(key)) return { kind: 'invalid', reason: 'api_key must be a non-empty single line' };
  if (envReferenceName(key) !== undefined) return { kind: 'reference', yaml: key };
  const litellm = LITELLM_REFERENCE.exec(key)?.[1];
  if (litellm !== undefined) return { kind: 'reference', yaml: `\${${litellm}}` };
  const name = secretNameFor(provider);
  return { kind: 'secret', yaml: `\${${name}}`, name, value: key };
}

/** The secrets file's text: a header, then `NAME=value` lines in name order. */
export function secretsText(secrets: ReadonlyMap<string, string>): string {
  const lines = ['# API keys stored by the gateway admin API. Keep this file private (mode 0600).'];
  for (const name of [...secrets.keys()].sort()) {
    if (!SECRET_NAME.test(name)) continue;
    lines.push(`${name}=${secrets.get(name)}`);
  }
  return `${lines.join('\n')}\n`;
}

export async function writeSecretsFile(configPath: string, secrets: ReadonlyMap<string, string>): Promise<void> {
  await writeFileAtomic(secretsPathFor(configPath), secretsText(secrets), { mode: 0o600 });
}
