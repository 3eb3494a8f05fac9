/**
 * The alias operations of the admin API, on top of the config store: each
 * write computes its edit from the file as it is when the write runs (inside
 * the store's queue), so guards see the current file, never a stale copy.
 */
import { splitTarget } from '@mana/llm-router';
import { isPlainObject } from '../plain-object.js';
import { AdminFailure } from './admin-failure.js';
import { aliasPatchBase, aliasSpecFromBody, aliasSpecFromYaml, aliasView, aliasYaml, isRequiredAlias, type AliasSpec } from './alias-resource.js';
import { mergePatchOf } from './body-checks.js';
import type { ConfigStore, CurrentConfig, WriteOutcome, WriteRequest } from './config-store.js';
import { applyMergePatch } from './merge-patch.js';
import { removeEntry, setEntry } from './yaml-edit.js';

export interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly version: string;
}

export function sectionOf(data: Record<string, unknown>, section: 'aliases' | 'providers'): Record<string, unknown> {
  const value = data[section];
  return isPlainObject(value) ? value : {};
}

function specOf(current: CurrentConfig, name: string): AliasSpec | undefined {
  const aliases = sectionOf(current.data, 'aliases');
  return Object.hasOwn(aliases, name) ? aliasSpecFromYaml(aliases[name]) : undefined;
}

function notFound(name: string): AdminFailure {
  return new AdminFailure('alias_not_found', `No alias "${name}" in the config.`);
}

export async function listAliases(store: ConfigStore): Promise<Answer> {
  const current = await store.read();
  const data = Object.entries(sectionOf(current.data, 'aliases')).flatMap(([name, raw]) => {
    const spec = aliasSpecFromYaml(raw);
    return spec === undefined ? [] : [aliasView(name, spec)];
  });
  return { status: 200, body: { object: 'list', data, version: current.version }, version: current.version };
}

export async function getAlias(store: ConfigStore, name: string): Promise<Answer> {
  const current = await store.read();
  const spec = specOf(current, name);
  if (spec === undefined) throw notFound(name);
  return { status: 200, body: { ...aliasView(name, spec), version: current.version }, version: current.version };
}

/** 409 name_conflict when `name` reads as a configured provider's direct target. */
export function checkAliasNameFree(name: string, providers: Iterable<string>): void {
  const prefix = splitTarget(name)?.provider;
  if (prefix === undefined || prefix === 'mana') return;
  for (const provider of providers) {
    if (provider === prefix) {
      throw new AdminFailure('name_conflict', `The alias name "${name}" clashes with provider ${prefix}'s direct targets (${prefix}/<model>).`, { heldBy: [`provider ${prefix}`] });
    }
  }
}

/** Writes `spec` as alias `name` (creating or replacing it) and answers with the stored alias. */
export async function writeAlias(
  store: ConfigStore,
  request: WriteRequest,
  name: string,
  providers: () => Iterable<string>,
  build: (existing: AliasSpec | undefined, current: CurrentConfig) => AliasSpec,
): Promise<{ answer: Answer; outcome: WriteOutcome }> {
  let created = false;
  const outcome = await store.write(request, (current) => {
    const raw = sectionOf(current.data, 'aliases')[name];
    const existing = specOf(current, name);
    created = existing === undefined;
    if (created) checkAliasNameFree(name, [...providers(), ...Object.keys(sectionOf(current.data, 'providers'))]);
    const spec = build(existing, current);
    return {
      text: setEntry(current.text, 'aliases', name, aliasYaml(spec, Array.isArray(raw))),
      change: `alias ${name} ${created ? 'created' : 'updated'} (${spec.chain.length} target${spec.chain.length === 1 ? '' : 's'})`,
    };
  });
  const spec = aliasSpecFromYaml(sectionOf(outcome.data, 'aliases')[name])!;
  return { answer: { status: created ? 201 : 200, body: { ...aliasView(name, spec), version: outcome.version }, version: outcome.version }, outcome };
}

export async function putAlias(store: ConfigStore, request: WriteRequest, name: string, body: unknown, providers: () => Iterable<string>): Promise<Answer> {
  const spec = aliasSpecFromBody(body, name);
  return (await writeAlias(store, request, name, providers, () => spec)).answer;
}

export async function patchAlias(store: ConfigStore, request: WriteRequest, name: string, body: unknown, providers: () => Iterable<string>): Promise<Answer> {
  const patch = mergePatchOf(body);
  const result = await writeAlias(store, request, name, providers, (existing) => {
    if (existing === undefined) throw notFound(name);
    const base = aliasPatchBase(existing);
    // `targets` / `target` in a patch replace the chain, as `chain` would.
    if (patch.targets !== undefined || patch.target !== undefined) delete base.chain;
    return aliasSpecFromBody(applyMergePatch(base, patch), name);
  });
  return result.answer;
}

export async function deleteAlias(store: ConfigStore, request: WriteRequest, name: string): Promise<Answer> {
  const outcome = await store.write(request, (current) => {
    if (specOf(current, name) === undefined && !Object.hasOwn(sectionOf(current.data, 'aliases'), name)) throw notFound(name);
    if (isRequiredAlias(name)) {
      throw new AdminFailure('alias_required', `The alias ${name} is declared by @mana/llm-aliases: product code calls it, so it cannot be deleted (change its chain instead).`, {
        heldBy: ['@mana/llm-aliases'],
      });
    }
    return { text: removeEntry(current.text, 'aliases', name), change: `alias ${name} deleted` };
  });
  return { status: 200, body: { deleted: name, version: outcome.version }, version: outcome.version };
}
