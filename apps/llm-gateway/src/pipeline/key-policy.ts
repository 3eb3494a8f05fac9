/**
 * What a service key holds its requests to, applied to a decoded request
 * before any upstream call (a step of the routed pipeline): its allow-list of
 * aliases and targets (403 alias_not_allowed), its priority (the default
 * when the request sends no X-Mana-LLM-Priority, and a ceiling: a background
 * key's header cannot raise it to realtime), and its limit of requests in
 * flight on this replica (429 key_concurrency_exceeded with Retry-After).
 * A static MANA_LLM_API_KEYS key, or auth off, holds a request to nothing.
 */
import { DEFAULT_ALIAS, MANA_LLM } from '@mana/llm-aliases';
import type { Operation } from '@mana/llm-router';
import type { ServiceKeyCaller } from '@mana/llm-service-keys';
import type { GatewayContext } from '../context.js';
import type { ApiCaller } from '../http/api-caller.js';
import { gatewayError, type GatewayError } from '../http/errors.js';
import type { Exchange } from './exchange.js';

/** How long a client refused for its key's concurrency is told to wait: a slot frees when any request of the key ends. */
export const KEY_CONCURRENCY_RETRY_AFTER_S = 1; // 1 s

export function isServiceKeyCaller(caller: ApiCaller | null): caller is ServiceKeyCaller {
  return caller !== null && 'policy' in caller;
}

/** The model a request names, as the router resolves an absent one. */
function modelName(model: string | undefined, operation: Operation): string {
  return model ?? (operation === 'embedding' ? MANA_LLM.EMBED : DEFAULT_ALIAS);
}

/**
 * The refusal `caller`'s key policy gives this request, or undefined: then
 * the default priority is set on `ex` and its concurrency slot is held
 * (`ex.keyLease`, released when the request ends).
 */
export function keyPolicyRefusal(ctx: GatewayContext, caller: ApiCaller | null, ex: Exchange, model: string | undefined, operation: Operation): GatewayError | undefined {
  if (!isServiceKeyCaller(caller)) return undefined;
  ctx.serviceKeys.noteUsed(caller.id);
  const refused = aliasRefusal(caller, model, operation);
  if (refused !== undefined) return refused;
  const { priority, maxConcurrency } = caller.policy;
  // The key's priority is a ceiling: a background key's requests stay background whatever the
  // header asks (its limit protects quotas from exactly these callers); a realtime key may still ask for background.
  if (priority === 'background' || (ex.priority === undefined && priority !== null)) ex.priority = priority;
  if (maxConcurrency !== null) {
    const lease = ctx.serviceKeys.inFlight.acquire(caller.id, maxConcurrency);
    if (lease === undefined) {
      return gatewayError(
        'key_concurrency_exceeded',
        `The key ${caller.name} has ${maxConcurrency} request${maxConcurrency === 1 ? '' : 's'} in flight on this gateway, its max_concurrency; retry when one has finished.`,
      );
    }
    ex.keyLease = lease;
  }
  return undefined;
}

/**
 * The refusal of the caller's allow-list for this model, or undefined. Also
 * what `/v1/messages/count_tokens` applies (it calls no upstream, so holds no
 * slot): a key must not learn from it which models exist beyond its list.
 */
export function aliasRefusal(caller: ApiCaller | null, model: string | undefined, operation: Operation): GatewayError | undefined {
  if (!isServiceKeyCaller(caller)) return undefined;
  const aliases = caller.policy.aliases;
  if (aliases === null) return undefined;
  const name = modelName(model, operation);
  if (aliases.has(name)) return undefined;
  const allowed = [...aliases].join(', ');
  return gatewayError(
    'alias_not_allowed',
    `The key ${caller.name} may not use '${name.slice(0, 200)}'. It may use: ${allowed.length > 500 ? `${allowed.slice(0, 500)}…` : allowed}.`,
    { param: 'model' },
  );
}
