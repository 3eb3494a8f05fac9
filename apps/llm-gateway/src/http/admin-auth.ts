/**
 * The admin key check behind the route table's `admin` and `master_key` auth
 * steps. The key is sent as `Authorization: Bearer <key>`; `master_key`
 * routes (the LiteLLM-compatible model routes) also take `x-api-key`, as
 * LiteLLM's master key does. A write logs a fingerprint of the key used (the
 * same one usage records carry, see key-fingerprint.ts), never the key.
 */
import type { IncomingMessage } from 'node:http';
import { bearerToken, type KeyChecker } from './auth.js';
import { gatewayError, type GatewayError } from './errors.js';
import { fingerprintOfKey } from './key-fingerprint.js';

/** The Authorization value to check: the header, or (when allowed) `x-api-key` as a bearer token. */
function authorizationOf(req: IncomingMessage, xApiKey: boolean): string | undefined {
  const authorization = req.headers.authorization;
  if (authorization !== undefined || !xApiKey) return authorization;
  const key = req.headers['x-api-key'];
  return typeof key === 'string' && key.trim() !== '' ? `Bearer ${key.trim()}` : undefined;
}

/** The error for a request without the admin key, or undefined when it may pass. */
export function adminKeyError(adminKey: KeyChecker | undefined, req: IncomingMessage, xApiKey = false): GatewayError | undefined {
  if (adminKey === undefined) {
    return gatewayError('admin_disabled', 'Admin routes are disabled: set MANA_LLM_ADMIN_KEY to enable them.');
  }
  const auth = adminKey.check(authorizationOf(req, xApiKey));
  if (auth === 'ok') return undefined;
  const how = xApiKey ? '"Authorization: Bearer <admin key>" or "x-api-key: <admin key>"' : '"Authorization: Bearer <admin key>"';
  return auth === 'missing' ? gatewayError('missing_admin_key', `Missing admin key: send ${how}.`) : gatewayError('invalid_admin_key', 'Invalid admin key.');
}

/** The fingerprint of the admin key a request (already admitted) presented. */
export function presentedKeyFingerprint(req: IncomingMessage): string {
  const token = bearerToken(authorizationOf(req, true));
  return token === undefined ? 'none' : fingerprintOfKey(token);
}
