/**
 * The usage API (admin key): GET /admin/usage/requests, /admin/usage/summary,
 * /admin/usage/errors. Query parameters are checked here (types, ranges, one
 * value each) and bound as parameters by the store, so a bad filter is a 400
 * `invalid_usage_query` naming the parameter, never a 5xx or an injected query.
 */
import type { Call } from '../call.js';
import { paramsOf } from '../http/url.js';
import {
  isUsageQueryError,
  MAX_PAGE_SIZE,
  requestJson,
  SUMMARY_GROUPS,
  type RequestPage,
  type RequestPageQuery,
  type SummaryGroup,
} from '@mana/llm-usage-store';
import type { GatewayContext } from '../context.js';
import { gatewayError, type GatewayError } from '../http/errors.js';

/** The summary's window when `since` is not given. */
const DEFAULT_SUMMARY_WINDOW_MS = 86_400_000; // 24 h
/** Longest accepted text filter (alias, target, code, key); longer cannot match a stored value. */
const MAX_FILTER_LENGTH = 512;

class BadParam extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
  }
}

type Params = URLSearchParams;

function one(params: Params, name: string): string | undefined {
  const all = params.getAll(name);
  if (all.length > 1) throw new BadParam(name, `${name} may be given once.`);
  return all[0];
}

function text(params: Params, name: string): string | undefined {
  const value = one(params, name);
  if (value === undefined) return undefined;
  if (value === '' || value.length > MAX_FILTER_LENGTH) throw new BadParam(name, `${name} must be 1 to ${MAX_FILTER_LENGTH} characters.`);
  return value;
}

/**
 * The last millisecond a Date can hold (100,000,000 days after 1970): a time
 * past it has no ISO form, so answering it would fail (a RangeError, once
 * seen as a 503) instead of naming the parameter.
 */
const MAX_TIME_MS = 8_640_000_000_000_000;

/** An ISO 8601 time or epoch milliseconds, within what a Date can hold. */
function time(params: Params, name: string): number | undefined {
  const value = one(params, name);
  if (value === undefined) return undefined;
  const ms = /^\d{1,16}$/.test(value) ? Number(value) : /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (!Number.isSafeInteger(ms)) throw new BadParam(name, `${name} must be an ISO 8601 time or epoch milliseconds.`);
  if (ms > MAX_TIME_MS) throw new BadParam(name, `${name} must be at most ${MAX_TIME_MS} (epoch milliseconds of +275760-09-13T00:00:00.000Z).`);
  return ms;
}

function integer(params: Params, name: string, min: number, max: number): number | undefined {
  const value = one(params, name);
  if (value === undefined) return undefined;
  const n = /^\d{1,10}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= min && n <= max)) throw new BadParam(name, `${name} must be a whole number from ${min} to ${max}.`);
  return n;
}

function flag(params: Params, name: string): boolean | undefined {
  const value = one(params, name);
  if (value === undefined) return undefined;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new BadParam(name, `${name} must be true or false.`);
}

function pageQuery(params: Params): RequestPageQuery {
  const since = time(params, 'since');
  const until = time(params, 'until');
  const limit = integer(params, 'limit', 1, MAX_PAGE_SIZE);
  const cursor = text(params, 'cursor');
  const alias = text(params, 'alias');
  const target = text(params, 'target');
  const code = text(params, 'code');
  // A key's id (`env-1`, … for MANA_LLM_API_KEYS), as usage records carry it in `key_id`.
  const key = text(params, 'key');
  const status = integer(params, 'status', 100, 599);
  const failedOver = flag(params, 'failed_over');
  return { since, until, limit, cursor, alias, target, code, key, status, failedOver };
}

function pageJson(page: RequestPage) {
  return { object: 'list', data: page.requests.map(requestJson), next_cursor: page.nextCursor };
}

/**
 * What the client hears when a usage-store call fails: a filter the API or the
 * store refused is the caller's 400 `invalid_usage_query` naming the parameter;
 * anything else is logged and answered 503 `usage_store_unavailable`. The usage
 * API and the config history both answer through it.
 */
export function usageStoreFailure(ctx: GatewayContext, error: unknown, logMessage: string, requestId?: string): GatewayError {
  if (error instanceof BadParam || isUsageQueryError(error)) return gatewayError('invalid_usage_query', error.message, { param: error.param });
  ctx.logger.warn({ req_id: requestId, err: { message: (error as Error)?.message } }, logMessage);
  return gatewayError('usage_store_unavailable', 'The usage store cannot answer right now; see /v1/health.');
}

async function answer(call: Call, work: () => Promise<unknown>): Promise<void> {
  const { ctx } = call;
  const noStore = { 'cache-control': 'no-store' };
  if (ctx.usageRecorder === undefined) return call.error(gatewayError('usage_disabled', 'Usage recording is off (--usage off).'), noStore);
  let body: unknown;
  try {
    body = await work();
  } catch (error) {
    return call.error(usageStoreFailure(ctx, error, 'usage query failed', call.id), noStore);
  }
  call.json(200, body, noStore);
}

export function handleUsageRequests(call: Call): Promise<void> {
  return answer(call, async () => pageJson(await call.ctx.usageRecorder!.store.requests(pageQuery(paramsOf(call.req)))));
}

export function handleUsageErrors(call: Call): Promise<void> {
  return answer(call, async () => pageJson(await call.ctx.usageRecorder!.store.errors(pageQuery(paramsOf(call.req)))));
}

export function handleUsageSummary(call: Call): Promise<void> {
  return answer(call, async () => {
    const params = paramsOf(call.req);
    const store = call.ctx.usageRecorder!.store;
    const groupBy = (one(params, 'group_by') ?? 'alias') as SummaryGroup;
    if (!SUMMARY_GROUPS.includes(groupBy)) throw new BadParam('group_by', `group_by must be one of ${SUMMARY_GROUPS.join(', ')}.`);
    const until = time(params, 'until');
    const since = time(params, 'since') ?? (until ?? Date.now()) - DEFAULT_SUMMARY_WINDOW_MS;
    const rows = await store.summary({ groupBy, since, until });
    return {
      object: 'usage.summary',
      group_by: groupBy,
      since: new Date(since).toISOString(),
      until: until === undefined ? null : new Date(until).toISOString(),
      data: rows.map((r) => ({
        [groupBy]: r.key,
        requests: r.requests,
        errors: r.errors,
        rescued: r.rescued,
        prompt_tokens: r.promptTokens,
        completion_tokens: r.completionTokens,
        cost_usd: r.costUsd,
        duration_ms: r.durationMs,
        ttfb_ms: r.ttfbMs,
      })),
    };
  });
}
