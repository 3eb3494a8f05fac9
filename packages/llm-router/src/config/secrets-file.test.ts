import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadConfigFile } from './load-config.js';
import { parseSecrets, secretsPathFor, withSecrets } from './secrets-file.js';
import { withLongForm } from './test-configs.js';

const CONFIG = withLongForm(
  '    chain: [local/m]\n',
  'providers:\n  local: { type: openai, base_url: "http://127.0.0.1:9/v1", api_key: "${MANA_LLM_SECRET_LOCAL}" }\n',
);

async function configDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'router-secrets-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'aliases.yaml'), CONFIG);
  return dir;
}

describe('secrets file', () => {
  it('lives beside the config: aliases.yaml → aliases.secrets.env', () => {
    expect(secretsPathFor('/etc/mana/aliases.yaml')).toBe('/etc/mana/aliases.secrets.env');
    expect(secretsPathFor('conf/gateway.yml')).toBe('conf/gateway.secrets.env');
  });

  it('is read by loadConfigFile with mode 0600; the environment wins over it', async () => {
    const dir = await configDir();
    await writeFile(join(dir, 'aliases.secrets.env'), '# written by the gateway\nMANA_LLM_SECRET_LOCAL=sk-from-file\n', { mode: 0o600 });
    const snapshot = await loadConfigFile(join(dir, 'aliases.yaml'), { env: {} });
    expect(snapshot.providers.get('local')?.apiKey).toBe('sk-from-file');
    const overridden = await loadConfigFile(join(dir, 'aliases.yaml'), { env: { MANA_LLM_SECRET_LOCAL: 'sk-env' } });
    expect(overridden.providers.get('local')?.apiKey).toBe('sk-env');
  });

  it('no secrets file: the config loads, the key is unset', async () => {
    const dir = await configDir();
    const snapshot = await loadConfigFile(join(dir, 'aliases.yaml'), { env: {} });
    expect(snapshot.providers.get('local')?.apiKey).toBeUndefined();
  });

  it('refuses a secrets file readable by others, naming the fix', async () => {
    const dir = await configDir();
    const path = join(dir, 'aliases.secrets.env');
    await writeFile(path, 'MANA_LLM_SECRET_LOCAL=sk-from-file\n');
    await chmod(path, 0o644);
    await expect(loadConfigFile(join(dir, 'aliases.yaml'), { env: {} })).rejects.toMatchObject({
      code: 'invalid_config',
      message: `invalid secrets file ${path}: it is readable by others (mode 644); run chmod 600 on it`,
    });
  });

  it('a malformed line names the line, never its content', () => {
    expect(() => parseSecrets('A=1\nsk-leaked-key\n', 'x.secrets.env')).toThrow(/^invalid secrets file x\.secrets\.env line 2: expected NAME=value$/);
    expect([...parseSecrets('A=1\n\n# c\nB=x=y\r\n', 's')]).toEqual([
      ['A', '1'],
      ['B', 'x=y'],
    ]);
  });

  it('withSecrets: env values win, unset env values do not hide a secret', () => {
    const merged = withSecrets({ A: 'env', B: undefined }, new Map([['A', 'file'], ['B', 'file-b']]));
    expect(merged).toMatchObject({ A: 'env', B: 'file-b' });
  });
});
