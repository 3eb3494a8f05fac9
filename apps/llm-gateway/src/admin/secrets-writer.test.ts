import { describe, expect, it } from 'vitest';
import { parseSecrets } from '@mana/llm-router';
import { freeSecretName, secretNameFor, secretsText, storeApiKey, storeCredentialHeader, variablesInUse } from './secrets-writer.js';

describe('storeApiKey', () => {
  it('references stay references, written as ${NAME}', () => {
    expect(storeApiKey('vllm', '${VLLM_KEY}')).toEqual({ kind: 'reference', yaml: '${VLLM_KEY}' });
    expect(storeApiKey('vllm', 'os.environ/VLLM_KEY')).toEqual({ kind: 'reference', yaml: '${VLLM_KEY}' });
  });

  it('a literal key becomes a secret under a generated name; the YAML gets only the reference', () => {
    expect(storeApiKey('local-vllm', 'sk-abc')).toEqual({
      kind: 'secret',
      yaml: '${MANA_LLM_SECRET_LOCAL_VLLM_API_KEY}',
      name: 'MANA_LLM_SECRET_LOCAL_VLLM_API_KEY',
      value: 'sk-abc',
    });
  });

  it('refuses multi-line, empty and over-long keys without quoting them', () => {
    for (const key of ['sk-a\nINJECTED=1', '${X:-a\nINJECTED=1}', '   ', 'k'.repeat(4097)]) {
      const stored = storeApiKey('p', key);
      expect(stored.kind).toBe('invalid');
      expect(JSON.stringify(stored)).not.toContain(key.trim() === '' ? 'never' : key);
    }
  });
});

describe('secretsText', () => {
  it('is read back by the router as written', () => {
    const secrets = new Map([[secretNameFor('b'), 'sk-b=with=equals'], [secretNameFor('a'), 'sk-a']]);
    const text = secretsText(secrets);
    expect(text.split('\n')[1]).toBe('MANA_LLM_SECRET_A_API_KEY=sk-a');
    expect(parseSecrets(text, 'x')).toEqual(secrets);
  });
});

describe('secret names', () => {
  it('a provider and a header get readable names; a name another value refers to is not taken again', () => {
    expect(secretNameFor('a-b')).toBe('MANA_LLM_SECRET_A_B_API_KEY');
    expect(secretNameFor('a_b')).toBe('MANA_LLM_SECRET_A_B_API_KEY');
    expect(secretNameFor('vllm', { kind: 'header', header: 'x-api-key' })).toBe('MANA_LLM_SECRET_VLLM_HEADER_X_API_KEY');
    expect(storeApiKey('a_b', 'sk-b', new Set(['MANA_LLM_SECRET_A_B_API_KEY']))).toMatchObject({ kind: 'secret', name: 'MANA_LLM_SECRET_A_B_API_KEY_2' });
    expect(freeSecretName('N', new Set(['N', 'N_2', 'N_3']))).toBe('N_4');
  });

  it('variablesInUse lists every reference in the config except inside the provider being written', () => {
    const data = {
      providers: { 'a-b': { api_key: '${MANA_LLM_SECRET_A_B_API_KEY}' }, a_b: { api_key: '${OWN}', headers: { Authorization: 'Bearer ${OWN_TOKEN}' } } },
      settings: { retries: '${RETRIES:-0}' },
      aliases: { 'mana/x': { chain: ['$${NOT_A_REFERENCE}/m'] } },
    };
    expect([...variablesInUse(data, 'a_b')].sort()).toEqual(['MANA_LLM_SECRET_A_B_API_KEY', 'RETRIES']);
  });
});

describe('storeCredentialHeader', () => {
  it('a literal goes to the secrets file; a value that refers to a variable is written as sent', () => {
    expect(storeCredentialHeader('p', 'Authorization', 'Bearer sk-live')).toEqual({
      kind: 'secret',
      yaml: '${MANA_LLM_SECRET_P_HEADER_AUTHORIZATION}',
      name: 'MANA_LLM_SECRET_P_HEADER_AUTHORIZATION',
      value: 'Bearer sk-live',
    });
    expect(storeCredentialHeader('p', 'Authorization', 'Bearer ${TOKEN}')).toEqual({ kind: 'reference', yaml: 'Bearer ${TOKEN}' });
  });

  it('refuses line breaks, empty and over-long values without quoting them', () => {
    for (const value of ['Bearer sk\r\nX-Injected: 1', ' ', 'v'.repeat(4097)]) {
      const stored = storeCredentialHeader('p', 'Authorization', value);
      expect(stored.kind).toBe('invalid');
      expect(JSON.stringify(stored)).not.toContain(value.trim() === '' ? 'never' : value);
    }
  });
});
