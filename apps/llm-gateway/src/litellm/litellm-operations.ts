/**
 * LiteLLM's model management (`/model/new`, `/model/update`, `/model/delete`,
 * `/model/info`, `/model_group/info`) as edits of the same config file the
 * admin API edits: `model_name` is an alias, each deployment one target of its
 * chain. A second deployment under an existing `model_name` becomes another
 * target (an alias going from one target to two becomes `weighted`), not a 409.
 */
import { redactUrl, splitTarget, type ConfigSnapshot, type ProviderConfig } from '@mana/llm-router';
import { AdminFailure } from '../admin/admin-failure.js';
import { checkAliasNameFree, sectionOf, type Answer } from '../admin/alias-operations.js';
import { aliasSpecFromBody, aliasSpecFromYaml, aliasYaml, effectiveStrategy, isRequiredAlias, type AliasSpec, type ChainEntry } from '../admin/alias-resource.js';
import type { ConfigStore, CurrentConfig, WriteRequest } from '../admin/config-store.js';
import { checkName } from '../admin/names.js';
import { isBuiltInProvider, providerWrite } from '../admin/provider-resource.js';
import { variablesInUse } from '../admin/secrets-writer.js';
import { targetDigest } from '../admin/target-digest.js';
import { configData, removeEntry, setEntry } from '../admin/yaml-edit.js';
import { defaultBaseUrl, litellmPrefixOf, providerNameFor, readDeployment, type Deployment } from './litellm-params.js';
import { isPlainObject } from '../plain-object.js';

interface Located {
  readonly alias: string;
  readonly index: number;
  readonly spec: AliasSpec;
}


function locate(data: Record<string, unknown>, id: string): Located | undefined {
  for (const [alias, raw] of Object.entries(sectionOf(data, 'aliases'))) {
    const spec = aliasSpecFromYaml(raw);
    const index = spec?.chain.findIndex((entry) => targetDigest(alias, entry.target) === id) ?? -1;
    if (spec !== undefined && index !== -1) return { alias, index, spec };
  }
  return undefined;
}

function notFound(id: string): AdminFailure {
  return new AdminFailure('target_not_found', `No deployment with id "${id.slice(0, 100)}" (GET /model/info lists them).`, { param: 'id' });
}

/** The file being edited: its text plus the secrets to store and what changed. */
class Draft {
  text: string;
  private parsed: { readonly text: string; readonly data: Record<string, unknown> } | undefined;
  readonly secrets = new Map<string, string>();
  readonly changes: string[] = [];
  readonly warnings: string[] = [];

  constructor(current: CurrentConfig, readonly snapshot: ConfigSnapshot) {
    this.text = current.text;
  }

  /** The parsed text, parsed again only after the text changed (one operation reads it several times). */
  get data(): Record<string, unknown> {
    if (this.parsed?.text !== this.text) this.parsed = { text: this.text, data: configData(this.text) };
    return this.parsed.data;
  }

  setAlias(name: string, spec: AliasSpec): void {
    // Through the admin API's own checks (unknown fields, chain size).
    const checked = aliasSpecFromBody({ ...spec, chain: spec.chain }, name);
    const raw = sectionOf(this.data, 'aliases')[name];
    this.text = setEntry(this.text, 'aliases', name, aliasYaml(checked, Array.isArray(raw)));
  }

  removeTarget(at: Located): void {
    const chain = at.spec.chain.filter((_, i) => i !== at.index);
    if (chain.length > 0) {
      this.setAlias(at.alias, { ...at.spec, chain });
      return;
    }
    if (isRequiredAlias(at.alias)) {
      throw new AdminFailure('alias_required', `${at.alias} is declared by @mana/llm-aliases: its last deployment cannot be removed.`, { heldBy: ['@mana/llm-aliases'] });
    }
    this.text = removeEntry(this.text, 'aliases', at.alias);
    this.changes.push(`alias ${at.alias} deleted (its last deployment went)`);
  }

  /** The provider for a deployment: an existing one with the same base URL and type, or a new one. */
  provider(deployment: Deployment): string {
    const base = deployment.apiBase ?? defaultBaseUrl(deployment);
    const declared = sectionOf(this.data, 'providers');
    let name: string | undefined;
    if (base === undefined) {
      name = deployment.builtIn!;
    } else {
      for (const provider of this.snapshot.providers.values()) {
        if (provider.baseUrl === base && provider.type === deployment.type && (deployment.builtIn === undefined || provider.name === deployment.builtIn || !isBuiltInProvider(provider.name))) {
          name = provider.name;
          break;
        }
      }
    }
    if (name === undefined) {
      name = providerNameFor(deployment, (n) => this.snapshot.providers.has(n) || Object.hasOwn(declared, n));
      const fields: Record<string, unknown> = { type: deployment.type, base_url: base };
      if (deployment.apiKey !== undefined) fields.api_key = deployment.apiKey;
      else if (deployment.type === 'openai') fields.api_key_required = false;
      this.writeProvider(name, fields);
      this.changes.push(`provider ${name} created`);
    } else if (deployment.apiKey !== undefined) {
      const own = isPlainObject(declared[name]) ? (declared[name] as Record<string, unknown>) : {};
      this.writeProvider(name, { ...own, api_key: deployment.apiKey });
      this.changes.push(`provider ${name} api key set`);
    }
    return name;
  }

  private writeProvider(name: string, fields: Record<string, unknown>): void {
    const write = providerWrite(name, fields, variablesInUse(this.data, name));
    for (const [variable, value] of write.secrets) this.secrets.set(variable, value);
    this.text = setEntry(this.text, 'providers', name, write.yaml);
  }

  /** Adds (or, when the same target is there, updates) a deployment; returns the alias and target. */
  add(deployment: Deployment, position?: number): { alias: string; target: string } {
    checkName(deployment.modelName, 'alias');
    const aliases = sectionOf(this.data, 'aliases');
    const existing = Object.hasOwn(aliases, deployment.modelName) ? aliasSpecFromYaml(aliases[deployment.modelName]) : undefined;
    if (existing === undefined) checkAliasNameFree(deployment.modelName, [...this.snapshot.providers.keys(), ...Object.keys(sectionOf(this.data, 'providers'))]);
    const provider = this.provider(deployment);
    const target = `${provider}/${deployment.model}`;
    const chain: ChainEntry[] = [...(existing?.chain ?? [])];
    const found = chain.findIndex((entry) => entry.target === target);
    let strategy = existing?.strategy;
    const growsToMany = chain.length + (found === -1 ? 1 : 0) > 1;
    // One target had no strategy; a second deployment makes it a load-balanced group, as in LiteLLM.
    if (growsToMany && (existing === undefined || existing.chain.length <= 1)) strategy = 'weighted';
    const weighted = (strategy ?? 'failover') === 'weighted';
    if (deployment.weight !== undefined && !weighted && growsToMany) {
      this.warnings.push(`litellm_params.weight was ignored: ${deployment.modelName} uses strategy ${String(strategy)}`);
    }
    const entry: ChainEntry = {
      target,
      ...(weighted && deployment.weight !== undefined ? { weight: deployment.weight } : found === -1 ? {} : { weight: chain[found]!.weight }),
      ...(deployment.settings === undefined ? (found === -1 ? {} : { settings: chain[found]!.settings }) : { settings: deployment.settings }),
    };
    if (!weighted) delete (entry as { weight?: unknown }).weight;
    const at = deployment.order !== undefined ? deployment.order - 1 : (position ?? (found === -1 ? chain.length : found));
    if (found !== -1) chain.splice(found, 1);
    chain.splice(Math.min(at, chain.length), 0, entry);
    this.setAlias(deployment.modelName, { ...(existing ?? {}), ...(strategy === undefined ? {} : { strategy }), chain });
    this.changes.push(`deployment ${target} ${found === -1 ? 'added to' : 'updated in'} ${deployment.modelName}`);
    return { alias: deployment.modelName, target };
  }
}

/** One deployment as LiteLLM's /model/info lists it (never the api_key). */
export function deploymentView(alias: string, entry: ChainEntry, index: number, provider: ProviderConfig | undefined): Record<string, unknown> {
  const { provider: providerName, model } = splitTarget(entry.target) ?? { provider: entry.target, model: '' };
  const prefix = provider === undefined ? providerName : litellmPrefixOf(provider.name, provider.type);
  return {
    model_name: alias,
    litellm_params: {
      model: `${prefix}/${model}`,
      // User info and query values hidden: a key may sit in `?api_key=`.
      ...(provider === undefined ? {} : { api_base: redactUrl(provider.baseUrl) }),
      ...(entry.weight === undefined ? {} : { weight: entry.weight }),
      order: index + 1,
    },
    model_info: { id: targetDigest(alias, entry.target), db_model: false, mana_target: entry.target, mana_provider: providerName },
  };
}

/** The provider a chain target (`provider/model`) names, as the snapshot configures it. */
function providerOf(snapshot: ConfigSnapshot, target: string): ProviderConfig | undefined {
  const name = splitTarget(target)?.provider;
  return name === undefined ? undefined : snapshot.providers.get(name);
}

function deployments(data: Record<string, unknown>, snapshot: ConfigSnapshot): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const [alias, raw] of Object.entries(sectionOf(data, 'aliases'))) {
    const spec = aliasSpecFromYaml(raw);
    spec?.chain.forEach((entry, index) => out.push(deploymentView(alias, entry, index, providerOf(snapshot, entry.target))));
  }
  return out;
}

async function writeDraft(store: ConfigStore, request: WriteRequest, snapshot: () => ConfigSnapshot, edit: (draft: Draft) => { alias: string; target: string } | string): Promise<{ answer: Answer }> {
  let result: { alias: string; target: string } | string = '';
  let warnings: string[] = [];
  const outcome = await store.write(request, (current) => {
    const draft = new Draft(current, snapshot());
    result = edit(draft);
    warnings = draft.warnings;
    return { text: draft.text, secrets: draft.secrets, change: draft.changes.join('; ') || 'nothing' };
  });
  const done = result as { alias: string; target: string } | string;
  if (typeof done === 'string') return { answer: { status: 200, body: { message: `Model: ${done} deleted successfully`, id: done, version: outcome.version }, version: outcome.version } };
  const spec = aliasSpecFromYaml(sectionOf(outcome.data, 'aliases')[done.alias])!;
  const index = spec.chain.findIndex((entry) => entry.target === done.target);
  const view = deploymentView(done.alias, spec.chain[index]!, index, providerOf(outcome.snapshot, done.target));
  const body = { model_id: targetDigest(done.alias, done.target), ...view, ...(warnings.length === 0 ? {} : { warnings }), version: outcome.version };
  return { answer: { status: 200, body, version: outcome.version } };
}

export async function newModel(store: ConfigStore, request: WriteRequest, snapshot: () => ConfigSnapshot, body: unknown): Promise<Answer> {
  const deployment = readDeployment(body);
  const { answer } = await writeDraft(store, request, snapshot, (draft) => {
    draft.warnings.push(...deployment.warnings);
    return draft.add(deployment);
  });
  return answer;
}

/** POST /model/update (`model_info.id` in the body) and PATCH /model/{id}/update: merges the given fields over the deployment. */
export async function updateModel(store: ConfigStore, request: WriteRequest, snapshot: () => ConfigSnapshot, id: string | undefined, body: unknown): Promise<Answer> {
  if (!isPlainObject(body)) throw new AdminFailure('invalid_request', 'The body must be a JSON object {model_name?, litellm_params?, model_info?}.');
  const deploymentId = id ?? (isPlainObject(body.model_info) && typeof body.model_info.id === 'string' ? body.model_info.id : undefined);
  if (deploymentId === undefined) throw new AdminFailure('invalid_request', 'model_info.id must name the deployment to update.', { param: 'model_info.id' });
  const { answer } = await writeDraft(store, request, snapshot, (draft) => {
    const at = locate(draft.data, deploymentId);
    if (at === undefined) throw notFound(deploymentId);
    const entry = at.spec.chain[at.index]!;
    const current = deploymentView(at.alias, entry, at.index, providerOf(draft.snapshot, entry.target));
    const params = { ...(current.litellm_params as Record<string, unknown>), order: undefined, ...(isPlainObject(body.litellm_params) ? body.litellm_params : {}) };
    const modelInfo = isPlainObject(body.model_info) ? Object.fromEntries(Object.entries(body.model_info).filter(([key]) => key !== 'id')) : undefined;
    const next = readDeployment({ model_name: typeof body.model_name === 'string' ? body.model_name : at.alias, litellm_params: params, ...(modelInfo === undefined ? {} : { model_info: modelInfo }) });
    draft.warnings.push(...next.warnings);
    const sameAlias = next.modelName === at.alias;
    if (!sameAlias) {
      // Moving to another alias: leave the old one (it may lose its last target, unless required).
      draft.removeTarget(at);
      return draft.add(next);
    }
    // Same alias: the new target takes the old one's place; a changed target replaces it.
    const added = draft.add(next, at.index);
    if (added.target !== entry.target) {
      const old = locate(draft.data, deploymentId);
      if (old !== undefined) draft.removeTarget(old);
    }
    return added;
  });
  return answer;
}

export async function deleteModel(store: ConfigStore, request: WriteRequest, snapshot: () => ConfigSnapshot, body: unknown): Promise<Answer> {
  const id = isPlainObject(body) && typeof body.id === 'string' ? body.id : undefined;
  if (id === undefined) throw new AdminFailure('invalid_request', 'The body must be {"id": "<deployment id>"}.', { param: 'id' });
  const { answer } = await writeDraft(store, request, snapshot, (draft) => {
    const at = locate(draft.data, id);
    if (at === undefined) throw notFound(id);
    draft.removeTarget(at);
    draft.changes.push(`deployment ${at.spec.chain[at.index]!.target} removed from ${at.alias}`);
    return id;
  });
  return answer;
}

export async function modelInfo(store: ConfigStore, snapshot: ConfigSnapshot, id: string | undefined): Promise<Answer> {
  const current = await store.read();
  const all = deployments(current.data, snapshot);
  const data = id === undefined ? all : all.filter((d) => (d.model_info as { id: string }).id === id);
  return { status: 200, body: { data }, version: current.version };
}

export async function modelGroupInfo(store: ConfigStore, snapshot: ConfigSnapshot, group: string | undefined): Promise<Answer> {
  const current = await store.read();
  const data: Record<string, unknown>[] = [];
  for (const [alias, raw] of Object.entries(sectionOf(current.data, 'aliases'))) {
    if (group !== undefined && alias !== group) continue;
    const spec = aliasSpecFromYaml(raw);
    if (spec === undefined) continue;
    const providers = [...new Set(spec.chain.map((entry) => splitTarget(entry.target)?.provider ?? entry.target))];
    data.push({
      model_group: alias,
      providers,
      mode: 'chat',
      max_input_tokens: null,
      max_output_tokens: null,
      tpm: null,
      rpm: null,
      mana_strategy: effectiveStrategy(spec),
      mana_deployments: spec.chain.map((entry) => targetDigest(alias, entry.target)),
    });
  }
  return { status: 200, body: { data }, version: current.version };
}
