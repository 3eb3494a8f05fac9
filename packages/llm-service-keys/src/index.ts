/** @mana/llm-service-keys — public API (re-exports only). */
export { KEY_ID, KEY_ID_LENGTH, KEY_LENGTH, KEY_PREFIX, SECRET_BYTES, SECRET_LENGTH, digestOfKey, isKeyId, newKey, newKeyId, parseKey } from './key-format.js';
export type { NewKey, ParsedKey } from './key-format.js';
export { KEY_PRIORITIES, isKeyActive, serviceKeyJson } from './key-record.js';
export type { KeyDigests, KeyPriority, KeySettings, ServiceKey, ServiceKeyJson, StoredServiceKey } from './key-record.js';
export {
  KEY_FIELDS,
  KEY_FIELD_NAMES,
  KEY_NAME,
  KeyFieldError,
  MAX_ALIASES,
  MAX_ALIAS_LENGTH,
  MAX_CONCURRENCY,
  MAX_DESCRIPTION_LENGTH,
  MAX_NAME_LENGTH,
  STATIC_KEY_NAME,
  isKeyFieldError,
  settingsFromCreate,
  settingsFromPatch,
  settingsOf,
} from './key-fields.js';
export type { KeyFieldName, KeyFieldReason } from './key-fields.js';
export { KeyIndex } from './key-index.js';
export type { KeyPolicy, ServiceKeyCaller } from './key-index.js';
export { DEFAULT_ROTATION_GRACE_MS, MAX_ROTATION_GRACE_MS, issueKey, rotateKey } from './key-lifecycle.js';
export type { IssuedKey } from './key-lifecycle.js';
