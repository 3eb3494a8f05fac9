/** GET /v1/models and GET /v1/models/{id}: the aliases, then the direct targets of their chains. */
import { splitTarget } from '@mana/llm-router';
import type { Call } from '../call.js';
import type { GatewayContext } from '../context.js';
import { modelNotFound } from '../http/errors.js';

interface ModelJson {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  description?: string;
  /** Aliases: `chat` or `embedding` (the route that serves them). */
  kind?: 'chat' | 'embedding';
  /** Embedding aliases: the one vector space every target serves. */
  embedding_space?: string;
}

function modelJson(ctx: GatewayContext, id: string): ModelJson {
  const snapshot = ctx.router.config;
  const created = Math.floor(snapshot.loadedAt / 1000);
  const alias = snapshot.aliases.get(id);
  if (alias !== undefined) {
    const json: ModelJson = { id, object: 'model', created, owned_by: 'mana', description: alias.description, kind: alias.kind };
    if (alias.embeddingSpace !== undefined) json.embedding_space = alias.embeddingSpace;
    return json;
  }
  return { id, object: 'model', created, owned_by: splitTarget(id)?.provider ?? 'mana' };
}

export function handleModels(call: Call): void {
  const data = call.ctx.router.models().map((id) => modelJson(call.ctx, id));
  call.json(200, { object: 'list', data });
}

export function handleModel(call: Call): void {
  const { ctx } = call;
  const id = call.params.id!;
  if (!ctx.router.models().includes(id)) return call.error(modelNotFound(id, [...ctx.router.config.aliases.keys()]));
  call.json(200, modelJson(ctx, id));
}
