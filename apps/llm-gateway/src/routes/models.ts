/** GET /v1/models and GET /v1/models/{id}: the aliases, then the direct targets of their chains. */
import type { ServerResponse } from 'node:http';
import { splitTarget } from '@mana/llm-router';
import type { GatewayContext } from '../context.js';
import { modelNotFound } from '../http/errors.js';
import { sendError, sendJson } from '../http/respond.js';

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

export function handleModels(ctx: GatewayContext, res: ServerResponse, requestId: string): void {
  const data = ctx.router.models().map((id) => modelJson(ctx, id));
  sendJson(res, ctx.state, 200, { object: 'list', data }, { 'x-request-id': requestId });
}

export function handleModel(ctx: GatewayContext, res: ServerResponse, requestId: string, id: string): void {
  const models = ctx.router.models();
  if (!models.includes(id)) {
    sendError(res, ctx.state, modelNotFound(id, [...ctx.router.config.aliases.keys()]), { 'x-request-id': requestId });
    return;
  }
  sendJson(res, ctx.state, 200, modelJson(ctx, id), { 'x-request-id': requestId });
}
