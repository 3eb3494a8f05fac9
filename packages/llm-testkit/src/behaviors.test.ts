import { describe, expect, test } from 'vitest';
import { BehaviorTable, DEFAULT_BEHAVIOR } from './behaviors.js';

describe('BehaviorTable', () => {
  test('falls back to the built-in answer', () => {
    expect(new BehaviorTable().take('m')).toBe(DEFAULT_BEHAVIOR);
    expect(new BehaviorTable().take(undefined)).toEqual({ kind: 'answer' });
  });

  test("'*' is shared across models, sequences repeat their last element", () => {
    const t = new BehaviorTable();
    t.set('*', [{ kind: 'hang' }, { kind: 'destroy' }]);
    expect([t.take('a').kind, t.take('b').kind, t.take(undefined).kind]).toEqual(['hang', 'destroy', 'destroy']);
  });

  test('models() lists named models only; empty sequences are refused', () => {
    const t = new BehaviorTable();
    t.set('*', { kind: 'hang' });
    t.set('a', { kind: 'hang' });
    expect(t.models()).toEqual(['a']);
    expect(() => t.set('b', [])).toThrow(TypeError);
  });

  test('a script chooses each behaviour from the request body', () => {
    const t = new BehaviorTable();
    t.set('a', (body) => ((body as { n: number }).n > 1 ? { kind: 'hang' } : { kind: 'destroy' }));
    expect([t.take('a', { n: 1 }).kind, t.take('a', { n: 2 }).kind, t.take('a', { n: 0 }).kind]).toEqual(['destroy', 'hang', 'destroy']);
  });
});
