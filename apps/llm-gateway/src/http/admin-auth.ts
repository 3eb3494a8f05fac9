/**
 * The admin key check behind the route table's `admin` and `master_key` auth
 * steps. The key is sent as `Authorization: Bearer <key>` or `x-api-key`
 * (http/auth.ts, as every key is; LiteLLM's master key is sent either way). A write logs a fingerprint of the key used (the
 * same one usage records carry, see key-fingerprint.ts), never the key.
 */
import type { IncomingMessage } from 'node:http';
import { bearerToken, presentedAuthorization, type KeyChecker } from './auth.js';
import { gatewayError, type GatewayError } from './errors.js';
import { fingerprintOfKey } from './key-fingerprint.js';

/** The error for a request without the admin key, or undefined when it may pass. */
export function adminKeyError(adminKey: KeyChecker | undefined, req: IncomingMessage): GatewayError | undefined {
  if (adminKey === undefined) {
    return gatewayError('admin_disabled', 'Admin routes are disabled: set MANA_LLM_ADMIN_KEY to enable them.');
  }
  const auth = adminKey.check(presentedAuthorization(req));
  if (typeof auth === 'object') return undefined; // the admin is nobody's service: no caller to attribute

  return auth === 'missing'
    ? gatewayError('missing_admin_key', 'Missing admin key: send "Authorization: Bearer <admin key>" or "x-api-key: <admin key>".')
    : gatewayError('invalid_admin_key', 'Invalid admin key.');
}

/** The fingerprint of the admin key a request (already admitted) presented. */
export function presentedKeyFingerprint(req: IncomingMessage): string {
  const token = bearerToken(presentedAuthorization(req));
  return token === undefined ? 'none' : fingerprintOfKey(token);
}
