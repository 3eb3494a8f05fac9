import type { Options } from 'ajv';
import { RE2JS } from 're2js';

type RegExpEngine = NonNullable<NonNullable<Options['code']>['regExp']>;

class LinearPattern {
  constructor(
    private readonly source: string,
    private readonly compiled: RE2JS,
  ) {}

  test(text: string): boolean {
    return this.compiled.test(text);
  }

  /** Ajv keys the patterns it compiled by this text: one entry per distinct pattern. */
  toString(): string {
    return `/${this.source}/u`;
  }
}

let compiledCount = 0;

/** How many patterns this engine has compiled so far (a compiled RE2 program holds ~9 KB). */
export function patternsCompiled(): number {
  return compiledCount;
}

/**
 * The regex engine Ajv matches a schema's `pattern` and `patternProperties`
 * with: RE2 (re2js, pure JavaScript), whose time is linear in the text.
 *
 * Why not JavaScript's RegExp: it backtracks, so a client's pattern such as
 * `^(a+)+$` against a model's answer of thirty `a`s and a `!` takes seconds to
 * minutes (the gateway's event loop once froze for over a minute on it; on the
 * schema worker it would use up the job's budget and fail a good answer). The
 * pattern is the caller's and the text is the model's: neither can be trusted.
 *
 * The price: RE2 has no lookaround and no backreferences. A pattern that uses
 * them (or is otherwise not RE2 syntax) throws here, which makes the schema
 * fail to compile: `invalid_schema`, before anything is sent upstream.
 * JavaScript spellings RE2 writes differently (`\u00e9`, `(?<name>…)`, `[^]`)
 * are translated first.
 */
export const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string): LinearPattern => {
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(
        `pattern ${JSON.stringify(pattern.slice(0, 100))} is not supported: patterns are matched with RE2 ` +
          `(no lookahead, lookbehind or backreferences): ${reason}`,
      );
    }
    compiledCount++;
    return new LinearPattern(pattern, compiled);
  },
  // Only read by Ajv's standalone code generation, which is not used.
  { code: 're2js' },
);
