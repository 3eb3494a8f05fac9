import type { FakeBehavior, FakeScript } from './types.js';

/** The built-in behaviour when nothing else matches: a plain deterministic answer. */
export const DEFAULT_BEHAVIOR: FakeBehavior = Object.freeze({ kind: 'answer' }) as FakeBehavior;

interface Sequence {
  readonly list: readonly FakeBehavior[];
  next: number;
  /** Addition: chooses each request's behaviour from its body instead of the list. */
  readonly script?: FakeScript;
}

/**
 * Which behaviour answers the next request for a model. Lookup order: the exact model,
 * then '*', then the fake's default. A sequence is consumed one per request and its last
 * element repeats, so `[fail, fail, ok]` means "fail twice, then recover for good".
 * A script (a function of the request body) answers each request as it reads it: an
 * agent loop whose turns a client may interleave with requests of its own.
 */
export class BehaviorTable {
  readonly #byModel = new Map<string, Sequence>();
  readonly #fallback: FakeBehavior;

  constructor(fallback: FakeBehavior = DEFAULT_BEHAVIOR) {
    this.#fallback = fallback;
  }

  set(model: string, behavior: FakeBehavior | FakeBehavior[] | FakeScript): void {
    if (typeof behavior === 'function') {
      this.#byModel.set(model, { list: [], next: 0, script: behavior });
      return;
    }
    const list = Array.isArray(behavior) ? [...behavior] : [behavior];
    if (list.length === 0) throw new TypeError(`on(${JSON.stringify(model)}): empty behaviour sequence`);
    this.#byModel.set(model, { list, next: 0 });
  }

  take(model: string | undefined, body?: unknown): FakeBehavior {
    const seq = (model === undefined ? undefined : this.#byModel.get(model)) ?? this.#byModel.get('*');
    if (seq === undefined) return this.#fallback;
    if (seq.script !== undefined) return seq.script(body);
    const index = seq.next;
    if (index < seq.list.length - 1) seq.next = index + 1;
    return seq.list[index]!;
  }

  /** Models named in `on()` (not '*'), in insertion order. */
  models(): string[] {
    return [...this.#byModel.keys()].filter((m) => m !== '*');
  }

  clear(): void {
    this.#byModel.clear();
  }
}
