import { describe, expect, it } from 'vitest';
import { KEY_FIELD_NAMES, KeyFieldError, settingsFromCreate, settingsFromPatch, settingsOf } from './key-fields.js';

function refusal(work: () => unknown): KeyFieldError {
  try {
    work();
  } catch (error) {
    if (error instanceof KeyFieldError) return error;
    throw error;
  }
  throw new Error('not refused');
}

describe('key fields', () => {
  it('a create needs only a name; the rest defaults to null / false', () => {
    expect(settingsFromCreate({ name: 'mana-api' })).toEqual({
      name: 'mana-api',
      description: null,
      expiresAt: null,
      disabled: false,
      aliases: null,
      priority: null,
      maxConcurrency: null,
    });
  });

  it('reads every field', () => {
    const settings = settingsFromCreate({
      name: 'import.pipeline_2',
      description: 'Nightly <b>imports</b> & co',
      expires_at: '2027-01-01T00:00:00+01:00',
      disabled: true,
      aliases: ['mana/fast-text', 'local/m1', 'mana/fast-text'],
      priority: 'background',
      max_concurrency: 4,
    });
    expect(settings).toEqual({
      name: 'import.pipeline_2',
      description: 'Nightly <b>imports</b> & co',
      expiresAt: Date.UTC(2026, 11, 31, 23, 0, 0),
      disabled: true,
      aliases: ['mana/fast-text', 'local/m1'],
      priority: 'background',
      maxConcurrency: 4,
    });
  });

  it.each([
    [{}, 'missing_field', 'name'],
    [[], 'invalid_body', undefined],
    ['x', 'invalid_body', undefined],
    [null, 'invalid_body', undefined],
    [{ name: 'a', secret: 'x' }, 'unknown_field', 'secret'],
    [{ name: '' }, 'invalid_value', 'name'],
    [{ name: 'Mana-API' }, 'invalid_value', 'name'],
    [{ name: 'a b' }, 'invalid_value', 'name'],
    [{ name: 'a'.repeat(65) }, 'invalid_value', 'name'],
    [{ name: 'env-1' }, 'invalid_value', 'name'],
    [{ name: 'a\nb' }, 'invalid_value', 'name'],
    [{ name: null }, 'invalid_value', 'name'],
    [{ name: 'ok', description: 'line\nbreak' }, 'invalid_value', 'description'],
    [{ name: 'ok', description: 'x'.repeat(1_001) }, 'invalid_value', 'description'],
    [{ name: 'ok', description: 'x'.repeat(10_000) }, 'invalid_value', 'description'],
    [{ name: 'ok', description: 5 }, 'invalid_value', 'description'],
    [{ name: 'ok', expires_at: 'tomorrow' }, 'invalid_value', 'expires_at'],
    [{ name: 'ok', expires_at: '2027-01-01' }, 'invalid_value', 'expires_at'],
    [{ name: 'ok', expires_at: '2027-13-01T00:00:00Z' }, 'invalid_value', 'expires_at'],
    [{ name: 'ok', expires_at: 1_800_000_000_000 }, 'invalid_value', 'expires_at'],
    [{ name: 'ok', disabled: 'yes' }, 'invalid_value', 'disabled'],
    [{ name: 'ok', disabled: null }, 'invalid_value', 'disabled'],
    [{ name: 'ok', aliases: [] }, 'invalid_value', 'aliases'],
    [{ name: 'ok', aliases: 'mana/fast-text' }, 'invalid_value', 'aliases'],
    [{ name: 'ok', aliases: [''] }, 'invalid_value', 'aliases'],
    [{ name: 'ok', aliases: [' mana/x'] }, 'invalid_value', 'aliases'],
    [{ name: 'ok', aliases: [3] }, 'invalid_value', 'aliases'],
    [{ name: 'ok', aliases: Array.from({ length: 1_001 }, (_, i) => `a${i}`) }, 'invalid_value', 'aliases'],
    [{ name: 'ok', priority: 'urgent' }, 'invalid_value', 'priority'],
    [{ name: 'ok', max_concurrency: 0 }, 'invalid_value', 'max_concurrency'],
    [{ name: 'ok', max_concurrency: 10_001 }, 'invalid_value', 'max_concurrency'],
    [{ name: 'ok', max_concurrency: 1.5 }, 'invalid_value', 'max_concurrency'],
    [{ name: 'ok', max_concurrency: '4' }, 'invalid_value', 'max_concurrency'],
  ])('refuses %j: %s on %s', (body, reason, param) => {
    const error = refusal(() => settingsFromCreate(body));
    expect(error.reason).toBe(reason);
    expect(error.param).toBe(param);
    expect(error.message.length).toBeLessThan(400);
  });

  it('a patch changes the fields it names, null clears a nullable one, and a non-nullable null is refused', () => {
    const current = settingsFromCreate({ name: 'svc', description: 'd', priority: 'realtime', max_concurrency: 2 });
    expect(settingsFromPatch(current, { description: null, max_concurrency: 8 })).toEqual({ ...current, description: null, maxConcurrency: 8 });
    expect(settingsFromPatch(current, {})).toEqual(current);
    expect(refusal(() => settingsFromPatch(current, { disabled: null })).param).toBe('disabled');
    expect(refusal(() => settingsFromPatch(current, { id: 'x' })).reason).toBe('unknown_field');
  });

  it('settingsOf keeps exactly the settable fields', () => {
    const settings = settingsFromCreate({ name: 'svc' });
    expect(Object.keys(settingsOf({ ...settings, id: 'x', digests: {} } as never)).sort()).toEqual(Object.keys(settings).sort());
    expect(KEY_FIELD_NAMES).toEqual(['name', 'description', 'expires_at', 'disabled', 'aliases', 'priority', 'max_concurrency']);
  });
});
