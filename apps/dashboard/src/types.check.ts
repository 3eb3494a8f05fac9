/**
 * Compile-time checks (`pnpm typecheck`; nothing imports this file, so none
 * of it is bundled): the requests and attempts the pages read are the usage
 * API's own types, derived from the usage store's column declaration, not a
 * copy kept by hand — the copy this replaced had drifted (`model: string`
 * where the store sends null).
 */
import type { UsageAttemptJson, UsageRequestJson } from '@mana/llm-usage-store/usage-json';
import type { StoredAttempt, StoredRequest } from './types.js';

/** `true` exactly when A and B are the same type. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

export const readsTheServedRequest: Same<StoredRequest, UsageRequestJson> = true;
export const readsTheServedAttempt: Same<StoredAttempt, UsageAttemptJson> = true;
export const readsANullModel: Same<StoredRequest['model'], string | null> = true;
