/**
 * The provider operations of the admin API (see alias-operations.ts for how
 * writes run). Deleting a provider that a chain uses is refused (409
 * provider_in_use, listing the aliases); a built-in provider's entry can be
 * removed (the built-in stays), the built-in itself cannot.
 */
import type { ConfigSnapshot } from '@mana/llm-router';
import { AdminFailure } from './admin-failure.js';
import { isPlainObject } from '../plain-object.js';
import { aliasesUsing } from './alias-resource.js';
import { sectionOf, type Answer } from './alias-operations.js';
import { mergePatchOf } from './body-checks.js';
import type { ConfigStore, CurrentConfig, WriteOutcome, WriteRequest } from './config-store.js';
import { applyMergePatch } from './merge-patch.js';
import { isBuiltInProvider, providerFieldsFromBody, providerView, providerWrite } from './provider-resource.js';
import { variablesInUse } from './secrets-writer.js';
import { removeEntry, setEntry } from './yaml-edit.js';

function exists(current: CurrentConfig, name: string): boolean {
  return isBuiltInProvider(name) || Object.hasOwn(sectionOf(current.data, 'providers'), name);
}

function notFound(name: string): AdminFailure {
  return new AdminFailure('provider_not_found', `No provider "${name}" (neither built in nor in the config).`);
}

function view(data: Record<string, unknown>, snapshot: ConfigSnapshot, name: string): Record<string, unknown> {
  return providerView(name, sectionOf(data, 'providers')[name], snapshot.providers.get(name), aliasesUsing(sectionOf(data, 'aliases'), name));
}

export async function listProviders(store: ConfigStore, snapshot: ConfigSnapshot): Promise<Answer> {
  const current = await store.read();
  const names = new Set([...snapshot.providers.keys(), ...Object.keys(sectionOf(current.data, 'providers'))]);
  const data = [...names].map((name) => view(current.data, snapshot, name));
  return { status: 200, body: { object: 'list', data, version: current.version }, version: current.version };
}

export async function getProvider(store: ConfigStore, snapshot: ConfigSnapshot, name: string): Promise<Answer> {
  const current = await store.read();
  if (!exists(current, name)) throw notFound(name);
  return { status: 200, body: { ...view(current.data, snapshot, name), version: current.version }, version: current.version };
}

/** Writes provider `name` from its fields (`build` gets the file's current entry, if any). */
export async function writeProvider(
  store: ConfigStore,
  request: WriteRequest,
  name: string,
  build: (existing: Record<string, unknown> | undefined, current: CurrentConfig) => Record<string, unknown>,
): Promise<{ answer: Answer; outcome: WriteOutcome }> {
  let created = false;
  const outcome = await store.write(request, (current) => {
    const raw = sectionOf(current.data, 'providers')[name];
    const existing = isPlainObject(raw) ? raw : undefined;
    created = !exists(current, name);
    if (created) {
      const shadowed = Object.keys(sectionOf(current.data, 'aliases')).filter((alias) => alias.startsWith(`${name}/`));
      if (shadowed.length > 0) {
        throw new AdminFailure('name_conflict', `A provider "${name}" would clash with the aliases ${shadowed.join(', ')} (they read as ${name}/<model>).`, { heldBy: shadowed });
      }
    }
    const write = providerWrite(name, build(existing, current), variablesInUse(current.data, name));
    return {
      text: setEntry(current.text, 'providers', name, write.yaml),
      secrets: write.secrets,
      change: `provider ${name} ${created ? 'created' : 'updated'}${write.stored.length === 0 ? '' : ` (${write.stored.join(', ')} stored in the secrets file)`}`,
    };
  });
  return { answer: { status: created ? 201 : 200, body: { ...view(outcome.data, outcome.snapshot, name), version: outcome.version }, version: outcome.version }, outcome };
}

export async function putProvider(store: ConfigStore, request: WriteRequest, name: string, body: unknown): Promise<Answer> {
  const fields = providerFieldsFromBody(body, name);
  return (await writeProvider(store, request, name, () => fields)).answer;
}

export async function patchProvider(store: ConfigStore, request: WriteRequest, name: string, body: unknown): Promise<Answer> {
  const patch = mergePatchOf(body);
  providerFieldsFromBody(patch, name); // unknown fields → 400 before anything is read
  const result = await writeProvider(store, request, name, (existing, current) => {
    if (!exists(current, name)) throw notFound(name);
    return providerFieldsFromBody(applyMergePatch(existing ?? {}, patch), name);
  });
  return result.answer;
}

export async function deleteProvider(store: ConfigStore, request: WriteRequest, name: string): Promise<Answer> {
  const outcome = await store.write(request, (current) => {
    const declared = Object.hasOwn(sectionOf(current.data, 'providers'), name);
    if (!declared) {
      if (isBuiltInProvider(name)) throw new AdminFailure('provider_in_use', `${name} is a built-in provider: it cannot be deleted (only an override of it in the config).`, { heldBy: ['built-in'] });
      throw notFound(name);
    }
    const users = isBuiltInProvider(name) ? [] : aliasesUsing(sectionOf(current.data, 'aliases'), name);
    if (users.length > 0) {
      throw new AdminFailure('provider_in_use', `The provider ${name} is used by ${users.join(', ')}: remove it from their chains first.`, { heldBy: users });
    }
    return { text: removeEntry(current.text, 'providers', name), change: `provider ${name} deleted` };
  });
  return { status: 200, body: { deleted: name, version: outcome.version }, version: outcome.version };
}
