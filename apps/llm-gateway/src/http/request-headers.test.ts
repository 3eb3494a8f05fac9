import { describe, expect, it } from 'vitest';
import { isJsonContentType, priorityOf } from './request-headers.js';

describe('request header checks', () => {
  it('accepts JSON content types and a missing one', () => {
    for (const t of [undefined, 'application/json', 'Application/JSON; charset=utf-8', 'application/vnd.api+json']) {
      expect(isJsonContentType(t), String(t)).toBe(true);
    }
    for (const t of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', '']) {
      expect(isJsonContentType(t), t).toBe(false);
    }
  });

  it('maps X-Mana-LLM-Priority', () => {
    expect(priorityOf(undefined)).toBeUndefined();
    expect(priorityOf('background')).toBe('background');
    expect(priorityOf('realtime')).toBe('realtime');
    expect(priorityOf('urgent')).toBeNull();
    expect(priorityOf(['background', 'realtime'])).toBeNull();
  });
});
