/**
 * Config history (admin key; kept in the usage store, so 404 usage_disabled
 * with `--usage off`):
 *   GET  /admin/config/history              applied configs, newest first (limit, cursor)
 *   GET  /admin/config/history/{version}    one, its text and a unified diff against the one before
 *   POST /admin/config/rollback {version}   writes that text back through the admin write path
 * Texts and diffs are shown as GET /admin/config shows the file: a key written
 * into it by hand is `<redacted>`. The rollback writes the stored text itself.
 */
import type { IncomingMessage } from 'node:http';
import { createTwoFilesPatch } from 'diff';
import type { StoredConfigVersion, UsageStore } from '@mana/llm-usage-store';
import { AdminFailure } from '../admin/admin-failure.js';
import type { Answer } from '../admin/alias-operations.js';
import { redactedConfigText } from '../admin/config-view.js';
import type { GatewayContext } from '../context.js';
import { isPlainObject } from '../plain-object.js';
import type { Route } from '../http/route-table.js';
import { adminBody, answerAdmin, writeRequest } from './admin-resources.js';
import { paramsOf } from '../http/url.js';
import { usageStoreFailure } from './admin-usage.js';

/** A version is the first 16 hex digits of the file's SHA-256 (the admin API's ETag). */
const VERSION = /^[0-9a-f]{16}$/;
/** Unchanged lines shown around each change in a diff. */
const DIFF_CONTEXT_LINES = 3;
const HISTORY = '/admin/config/history';

/** Runs `work` on the usage store, answering its failures with the usage API's codes. */
async function withStore<T>(ctx: GatewayContext, work: (store: UsageStore) => Promise<T>): Promise<T> {
  const recorder = ctx.usageRecorder;
  if (recorder === undefined) throw new AdminFailure('usage_disabled', 'Usage recording is off (--usage off), and the config history with it.');
  try {
    // Configs applied just before this call are queued for the store: wait for them.
    await recorder.configRecorded();
    return await work(recorder.store);
  } catch (error) {
    const failure = usageStoreFailure(ctx, error, 'config history query failed');
    throw new AdminFailure(failure.code, failure.message, { param: failure.param });
  }
}

function versionNotFound(version: string): AdminFailure {
  return new AdminFailure('config_version_not_found', `No applied config with version ${version.slice(0, 100)} is kept in the history.`, { param: 'version' });
}

async function findVersion(ctx: GatewayContext, version: string) {
  if (!VERSION.test(version)) throw versionNotFound(version);
  const found = await withStore(ctx, (store) => store.configVersion(version));
  if (found === undefined) throw versionNotFound(version);
  return found;
}

function pageQuery(req: IncomingMessage): { limit?: number; cursor?: string } {
  const params = paramsOf(req);
  const limit = params.get('limit');
  const cursor = params.get('cursor');
  if (limit !== null && !/^\d{1,4}$/.test(limit)) throw new AdminFailure('invalid_usage_query', 'limit must be a whole number from 1 to 100.', { param: 'limit' });
  if (cursor !== null && (cursor === '' || cursor.length > 200)) throw new AdminFailure('invalid_usage_query', 'cursor is not one this API returned.', { param: 'cursor' });
  return { limit: limit === null ? undefined : Number(limit), cursor: cursor ?? undefined };
}

function entryJson(entry: { version: string; source: string; time: number }) {
  return { version: entry.version, source: entry.source, applied_at: new Date(entry.time).toISOString() };
}

/** The two texts as a unified diff (redacted the same way as the texts). */
function diffOf(previous: StoredConfigVersion, current: StoredConfigVersion): string {
  return createTwoFilesPatch(
    `config@${previous.version}`,
    `config@${current.version}`,
    redactedConfigText(previous.text),
    redactedConfigText(current.text),
    undefined,
    undefined,
    { context: DIFF_CONTEXT_LINES },
  );
}

async function listHistory(ctx: GatewayContext, req: IncomingMessage): Promise<Answer> {
  const query = pageQuery(req);
  const page = await withStore(ctx, (store) => store.configVersions(query));
  const current = await ctx.configStore.read();
  return {
    status: 200,
    body: { object: 'list', current_version: current.version, data: page.versions.map(entryJson), next_cursor: page.nextCursor },
    version: current.version,
  };
}

async function showVersion(ctx: GatewayContext, version: string): Promise<Answer> {
  const { current, previous } = await findVersion(ctx, version);
  return {
    status: 200,
    body: {
      ...entryJson(current),
      text: redactedConfigText(current.text),
      previous_version: previous?.version ?? null,
      diff: previous === null ? null : diffOf(previous, current),
    },
    version: current.version,
  };
}

function requestedVersion(body: unknown): string {
  const version = isPlainObject(body) ? body.version : undefined;
  if (typeof version !== 'string') throw new AdminFailure('invalid_request', 'The body must be a JSON object with the version to roll back to: {"version": "…"}.', { param: 'version' });
  return version;
}

async function rollback(ctx: GatewayContext, req: IncomingMessage): Promise<Answer> {
  const version = requestedVersion(await adminBody(req));
  const { current } = await findVersion(ctx, version);
  const outcome = await ctx.configStore.write({ ...writeRequest(req), source: 'rollback' }, () => ({ text: current.text, change: `rollback to ${version}` }));
  return {
    status: 200,
    body: { object: 'config.rollback', version: outcome.version, previous_version: outcome.previousVersion, changed: outcome.changed },
    version: outcome.version,
  };
}

export const CONFIG_HISTORY_ROUTES: readonly Route[] = [
  { method: 'GET', path: HISTORY, auth: 'admin', handler: (call) => answerAdmin(call, () => listHistory(call.ctx, call.req)) },
  {
    method: 'GET',
    path: `${HISTORY}/:version`,
    auth: 'admin',
    handler: (call) => answerAdmin(call, () => showVersion(call.ctx, call.params.version!)),
  },
  { method: 'POST', path: '/admin/config/rollback', auth: 'admin', handler: (call) => answerAdmin(call, () => rollback(call.ctx, call.req)) },
];
