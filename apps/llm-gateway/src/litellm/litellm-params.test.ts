import { describe, expect, it } from 'vitest';
import { isAdminFailure } from '../admin/admin-failure.js';
import { providerNameFor, readDeployment } from './litellm-params.js';

describe('readDeployment', () => {
  it('reads model prefix, api_base, weight, order and the settings LiteLLM names', () => {
    const d = readDeployment({
      model_name: 'ha',
      litellm_params: { model: 'openai/meta/llama-3.1-8b', api_base: 'http://10.0.0.5:8000/v1/', weight: 2, order: 1, timeout: 1.5, max_retries: 2 },
    });
    expect(d).toMatchObject({ modelName: 'ha', type: 'openai', prefix: 'openai', model: 'meta/llama-3.1-8b', apiBase: 'http://10.0.0.5:8000/v1', weight: 2, order: 1 });
    expect(d.settings).toEqual({ first_byte_timeout: '1500ms', retries: 2 });
    expect(d.warnings).toEqual([]);
  });

  it('built-in prefixes use the built-in provider', () => {
    expect(readDeployment({ model_name: 'x', litellm_params: { model: 'groq/llama-3.1-8b-instant' } })).toMatchObject({ builtIn: 'groq', type: 'openai' });
    expect(readDeployment({ model_name: 'x', litellm_params: { model: 'ollama_chat/gemma3:4b' } })).toMatchObject({ builtIn: 'ollama', type: 'ollama', model: 'gemma3:4b' });
    expect(readDeployment({ model_name: 'x', litellm_params: { model: 'anthropic/claude-sonnet-4-5' } })).toMatchObject({ builtIn: 'anthropic', type: 'anthropic', model: 'claude-sonnet-4-5' });
  });

  it('unknown keys become warnings, never errors', () => {
    const d = readDeployment({ model_name: 'x', litellm_params: { model: 'openai/m', rpm: 5 }, model_info: { id: 'mine', mode: 'chat' }, team_id: 't' });
    expect(d.warnings).toEqual([
      'team_id is not supported and was ignored',
      'litellm_params.rpm is not supported and was ignored',
      'model_info.id was ignored: deployment ids are derived from model_name and model',
      'model_info.mode is not supported and was ignored',
    ]);
  });

  it.each([
    [{ litellm_params: { model: 'openai/m' } }, 'model_name'],
    [{ model_name: 'x' }, 'litellm_params'],
    [{ model_name: 'x', litellm_params: { model: 'gpt-4o' } }, 'litellm_params.model'],
    [{ model_name: 'x', litellm_params: { model: 'bedrock/m' } }, 'litellm_params.model'],
    [{ model_name: 'x', litellm_params: { model: 'openai/m', order: 0 } }, 'litellm_params.order'],
    [{ model_name: 'x', litellm_params: { model: 'openai/m', timeout: 'soon' } }, 'litellm_params.timeout'],
  ])('%j is refused naming %s', (body, param) => {
    try {
      readDeployment(body);
      expect.unreachable();
    } catch (error) {
      expect(isAdminFailure(error) && error.error.param).toBe(param);
    }
  });
});

describe('providerNameFor', () => {
  it('is readable and unique', () => {
    const d = readDeployment({ model_name: 'x', litellm_params: { model: 'openai/m', api_base: 'http://GPU-Box:8000/v1' } });
    expect(providerNameFor(d, () => false)).toBe('openai-gpu-box-8000');
    expect(providerNameFor(d, (n) => n === 'openai-gpu-box-8000')).toBe('openai-gpu-box-8000-2');
  });
});
