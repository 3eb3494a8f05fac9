/**
 * LiteLLM's deployment description (`{model_name, litellm_params, model_info}`)
 * read into what the gateway's config knows: an alias (`model_name`), a
 * provider (chosen by the `model` prefix and `api_base`) and a target with its
 * weight, position and settings. Keys LiteLLM has and we do not are accepted
 * and listed as warnings, never refused.
 */
import type { ProviderType } from '@mana/llm-router';
import { AdminFailure } from '../admin/admin-failure.js';
import { isPlainObject } from '../plain-object.js';

interface PrefixSpec {
  readonly type: ProviderType;
  readonly builtIn?: string;
}

/**
 * LiteLLM `model` prefixes → the provider type, and the built-in provider used
 * when no api_base is given. A Map, since it is looked up with the client's
 * prefix: `constructor/x` or `toString/x` must be an unknown prefix (400), not
 * a member of Object.prototype read as a provider spec.
 */
const PREFIXES: ReadonlyMap<string, PrefixSpec> = new Map<string, PrefixSpec>([
  ['openai', { type: 'openai' }],
  ['hosted_vllm', { type: 'openai' }],
  ['openai_like', { type: 'openai' }],
  ['ollama', { type: 'ollama', builtIn: 'ollama' }],
  ['ollama_chat', { type: 'ollama', builtIn: 'ollama' }],
  ['groq', { type: 'openai', builtIn: 'groq' }],
  ['openrouter', { type: 'openai', builtIn: 'openrouter' }],
  ['together_ai', { type: 'openai', builtIn: 'together' }],
  ['gemini', { type: 'openai', builtIn: 'google' }],
  ['anthropic', { type: 'anthropic', builtIn: 'anthropic' }],
]);

/** The supported prefixes, as messages list them. */
const PREFIX_LIST = [...PREFIXES.keys()].join(', ');

/** The base URL a bare `openai/…` deployment (no api_base) goes to. */
const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/** The litellm_params keys we use; others are ignored with a warning. */
const USED_PARAMS = ['model', 'api_base', 'api_key', 'weight', 'order', 'timeout', 'max_retries'];

export interface Deployment {
  readonly modelName: string;
  readonly type: ProviderType;
  /** The built-in provider to use when no api_base names another. */
  readonly builtIn: string | undefined;
  /** The LiteLLM prefix as sent (`openai`, `ollama_chat`, …), for readable provider names. */
  readonly prefix: string;
  readonly model: string;
  readonly apiBase: string | undefined;
  readonly apiKey: string | undefined;
  readonly weight: unknown;
  /** 1-based position in the chain (LiteLLM's `order`: 1 is tried first). */
  readonly order: number | undefined;
  /** Target settings from timeout / max_retries. */
  readonly settings: Record<string, unknown> | undefined;
  readonly warnings: readonly string[];
}


const LITELLM_DEFAULT_PREFIX: Readonly<Record<ProviderType, string>> = { openai: 'openai', ollama: 'ollama', anthropic: 'anthropic' };

/** The LiteLLM `model` prefix that names a built-in provider (`groq` → `groq`, `google` → `gemini`). */
export function litellmPrefixOf(provider: string, type: ProviderType): string {
  for (const [prefix, spec] of PREFIXES) if (spec.builtIn === provider && spec.type === type) return prefix;
  return LITELLM_DEFAULT_PREFIX[type];
}

export function defaultBaseUrl(deployment: Deployment): string | undefined {
  return deployment.builtIn === undefined && deployment.type === 'openai' && deployment.prefix === 'openai' ? OPENAI_BASE_URL : undefined;
}

/** Reads `{model_name, litellm_params, model_info}`; throws AdminFailure for what cannot be a deployment. */
export function readDeployment(body: unknown): Deployment {
  if (!isPlainObject(body)) throw new AdminFailure('invalid_request', 'The body must be a JSON object {model_name, litellm_params, model_info}.');
  const warnings: string[] = [];
  for (const key of Object.keys(body)) if (!['model_name', 'litellm_params', 'model_info'].includes(key)) warnings.push(`${key.slice(0, 100)} is not supported and was ignored`);
  if (typeof body.model_name !== 'string' || body.model_name === '') throw new AdminFailure('invalid_request', 'model_name must be a non-empty string.', { param: 'model_name' });
  const params = body.litellm_params;
  if (!isPlainObject(params)) throw new AdminFailure('invalid_request', 'litellm_params must be an object with at least model.', { param: 'litellm_params' });
  for (const key of Object.keys(params)) if (!USED_PARAMS.includes(key)) warnings.push(`litellm_params.${key.slice(0, 100)} is not supported and was ignored`);
  if (isPlainObject(body.model_info)) {
    for (const key of Object.keys(body.model_info)) {
      warnings.push(key === 'id' ? 'model_info.id was ignored: deployment ids are derived from model_name and model' : `model_info.${key.slice(0, 100)} is not supported and was ignored`);
    }
  }
  return { ...readParams(params), modelName: body.model_name, warnings };
}

function readParams(params: Record<string, unknown>): Omit<Deployment, 'modelName' | 'warnings'> {
  const model = params.model;
  const slash = typeof model === 'string' ? model.indexOf('/') : -1;
  if (typeof model !== 'string' || slash <= 0 || slash === model.length - 1) {
    throw new AdminFailure('invalid_request', `litellm_params.model must be "<provider>/<model>" with a provider of: ${PREFIX_LIST}.`, { param: 'litellm_params.model' });
  }
  const prefix = model.slice(0, slash);
  const spec = PREFIXES.get(prefix);
  if (spec === undefined) {
    throw new AdminFailure('invalid_request', `litellm_params.model prefix "${prefix.slice(0, 50)}" is not supported (use one of: ${PREFIX_LIST}).`, { param: 'litellm_params.model' });
  }
  const text = (key: string): string | undefined => {
    const value = params[key];
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') throw new AdminFailure('invalid_request', `litellm_params.${key} must be a string.`, { param: `litellm_params.${key}` });
    return value;
  };
  const number = (key: string): number | undefined => {
    const value = params[key];
    if (value === undefined || value === null) return undefined;
    const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isFinite(n)) throw new AdminFailure('invalid_request', `litellm_params.${key} must be a number.`, { param: `litellm_params.${key}` });
    return n;
  };
  const order = number('order');
  if (order !== undefined && (!Number.isInteger(order) || order < 1)) throw new AdminFailure('invalid_request', 'litellm_params.order must be a whole number ≥ 1.', { param: 'litellm_params.order' });
  const settings: Record<string, unknown> = {};
  const timeout = number('timeout');
  if (timeout !== undefined) settings.first_byte_timeout = `${Math.round(timeout * 1000)}ms`;
  const retries = number('max_retries');
  if (retries !== undefined) settings.retries = retries;
  return {
    type: spec.type,
    builtIn: spec.builtIn,
    prefix,
    model: model.slice(slash + 1),
    apiBase: text('api_base')?.trim().replace(/\/+$/, ''),
    apiKey: text('api_key'),
    weight: params.weight ?? undefined,
    order,
    settings: Object.keys(settings).length === 0 ? undefined : settings,
  };
}

/** A readable provider name for a new base URL: `openai-127-0-0-1-8000`, `ollama-gpu-box-11434`. */
export function providerNameFor(deployment: Deployment, taken: (name: string) => boolean): string {
  let host = 'custom';
  try {
    const url = new URL(deployment.apiBase ?? '');
    host = `${url.hostname}${url.port === '' ? '' : `-${url.port}`}`;
  } catch {
    // An invalid api_base: the loader refuses it with its own message (422).
  }
  const kind = deployment.builtIn ?? LITELLM_DEFAULT_PREFIX[deployment.type];
  const base = `${kind}-${host}`.toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/-+/g, '-').replace(/-$/, '').slice(0, 60);
  if (!taken(base)) return base;
  for (let n = 2; ; n++) if (!taken(`${base}-${n}`)) return `${base}-${n}`;
}
