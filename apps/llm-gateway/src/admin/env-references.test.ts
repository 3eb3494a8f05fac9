import { describe, expect, it } from 'vitest';
import { redactedConfigText } from './config-view.js';
import { providerView } from './provider-resource.js';
import { storeApiKey } from './secrets-writer.js';

/** How each part of the admin API treats one provider value: as a reference to the environment, or as a literal (possibly secret). */
function treatment(value: string) {
  const file = `providers:\n  p:\n    type: openai\n    api_key: ${JSON.stringify(value)}\n    headers:\n      x-token: ${JSON.stringify(value)}\n`;
  const view = providerView('p', { api_key: value, headers: { 'x-token': value } }, undefined, []);
  return {
    configView: redactedConfigText(file).includes('<redacted>') ? 'literal' : 'reference',
    apiKeyEnv: view.api_key_env === null ? 'literal' : 'reference',
    headerView: (view.headers as Record<string, string>)['x-token'] === '<redacted>' ? 'literal' : 'reference',
    writer: storeApiKey('p', value).kind === 'reference' ? 'reference' : 'literal',
  };
}

const everywhere = (kind: string) => ({ configView: kind, apiKeyEnv: kind, headerView: kind, writer: kind });

describe('environment references in provider values', () => {
  it.each(['${GROQ_API_KEY}', '${GROQ_API_KEY:-}', '${X:-abc}'])('%s is a reference for the config view, the provider view and the writer', (value) => {
    expect(treatment(value)).toEqual(everywhere('reference'));
  });

  it.each(['sk-literal', 'Bearer ${X}', '$${X}', '${X}${Y}'])('%s is a literal for the config view, the provider view and the writer', (value) => {
    expect(treatment(value)).toEqual(everywhere('literal'));
  });

  it('a reference is written to the file as sent and read back with its variable', () => {
    expect(storeApiKey('p', '${X:-abc}')).toEqual({ kind: 'reference', yaml: '${X:-abc}' });
    expect(providerView('p', { api_key: '${X:-abc}' }, undefined, []).api_key_env).toBe('X');
  });
});
