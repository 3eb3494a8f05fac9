import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_ROTATION_GRACE_MS, KEY_FIELD_NAMES } from '@mana/llm-service-keys';
import { graceOf } from './key-operations.js';

describe('service key operations', () => {
  it('the admin API reference has a row for every key field', () => {
    const doc = readFileSync(new URL('../../../../docs/api/admin.md', import.meta.url), 'utf8');
    const missing = KEY_FIELD_NAMES.filter((field) => !doc.includes(`| \`${field}\` |`));
    expect(missing).toEqual([]);
  });

  it('a grace is seconds or a duration, default 24 h, 0 to 30 days', () => {
    expect(graceOf(undefined)).toBe(DEFAULT_ROTATION_GRACE_MS);
    expect(graceOf({})).toBe(DEFAULT_ROTATION_GRACE_MS);
    expect(graceOf({ grace: 0 })).toBe(0);
    expect(graceOf({ grace: '0' })).toBe(0);
    expect(graceOf({ grace: 90 })).toBe(90_000);
    expect(graceOf({ grace: '90' })).toBe(90_000);
    expect(graceOf({ grace: '24h' })).toBe(86_400_000);
    expect(graceOf({ grace: '30d' })).toBe(30 * 86_400_000);
    for (const grace of [-1, '31d', 'soon', true, null, [], Number.NaN, 1e12]) {
      expect(() => graceOf({ grace }), String(grace)).toThrow(expect.objectContaining({ error: expect.objectContaining({ code: 'invalid_request', param: 'grace' }) }));
    }
    expect(() => graceOf({ grace: '1h', extra: 1 })).toThrow(expect.objectContaining({ error: expect.objectContaining({ code: 'unknown_field' }) }));
    expect(() => graceOf('1h')).toThrow(expect.objectContaining({ error: expect.objectContaining({ code: 'invalid_request' }) }));
  });
});
