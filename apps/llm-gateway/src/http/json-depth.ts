/**
 * Nesting depth of JSON text, measured on the text BEFORE `JSON.parse`.
 *
 * Why before: V8 parses deeply nested arrays slowly (10 million `[` take
 * ~4.5 s here) and blocks the event loop meanwhile, so a depth check on the
 * parsed value comes too late: a 20 MB body of brackets would stall every
 * other request for seconds before its 400. This scan is one pass over the
 * text (time linear in the body, no allocation: 20 MB of brackets are refused
 * in ~12 ms, at the 65th bracket in microseconds) and replaces the walk over the
 * parsed tree that used to do this check.
 *
 * It counts `[` and `{` outside strings, which for valid JSON is exactly the
 * nesting depth; for invalid JSON the answer does not matter, since
 * `JSON.parse` refuses it right after. Strings are skipped with
 * `String#indexOf` (most bytes of a chat request are message text): ~7 µs for
 * a 10 kB request, ~0.2 µs for a one-line prompt.
 */

/**
 * Deeper JSON than this is refused, before it is parsed (by the scan below;
 * also protects JSON.stringify further down from stack overflow).
 */
export const MAX_JSON_DEPTH = 64;

const BACKSLASH = 0x5c; // \
const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d; // ]
const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d; // }

const COMMA = 0x2c; // ,
const SPACE = 0x20; // JSON whitespace is this or below
const MODEL_KEY = 'model';
/** The longest a key's text can be and still decode to `model` (each letter as a 6-character \\u escape, plus quotes). */
const MAX_ESCAPED_MODEL_KEY = MODEL_KEY.length * 6 + 2;

/** Where the top-level `model` string value sits in the text: quotes included, `end` exclusive. */
export interface ModelSpan {
  readonly start: number;
  readonly end: number;
}

export interface JsonTextScan {
  /** Nested deeper than the limit: refuse before parsing. */
  readonly tooDeep: boolean;
  /**
   * The one top-level `model` member's string value. Undefined when there is
   * none, when it is not a string, when the key appears twice (JSON.parse keeps
   * the last one, an upstream might take the first) or when some top-level key
   * is written with escapes short enough to spell `model`: then nobody may rely
   * on the span and the body is serialised again instead.
   */
  readonly model: ModelSpan | undefined;
}

const TOO_DEEP: JsonTextScan = Object.freeze({ tooDeep: true, model: undefined });
const NO_MODEL: JsonTextScan = Object.freeze({ tooDeep: false, model: undefined });

/** True when the JSON text nests arrays/objects deeper than `max`. */
export function exceedsJsonDepth(text: string, max: number): boolean {
  return scanJsonText(text, max).tooDeep;
}

/**
 * One pass over JSON text before it is parsed: its nesting depth (see above)
 * and, on the way, where the top-level `model` value is, so that a body passed
 * through to an upstream can be sent as the client wrote it with only that
 * value replaced (see the router's `BodyText`), instead of serialised again.
 * A string at depth 1 right after `{` or `,` is a key; right after `:` a value.
 */
export function scanJsonText(text: string, max: number): JsonTextScan {
  let depth = 0;
  const n = text.length;
  let i = 0;
  let last = 0; // the last character outside strings that is not whitespace
  let modelKey = false; // the last top-level key was `model`
  let models = 0;
  let unsure = false;
  let start = -1;
  let end = -1;
  while (i < n) {
    const quote = text.indexOf('"', i);
    const stop = quote === -1 ? n : quote;
    // The structure between two strings: count its brackets.
    for (; i < stop; i++) {
      const c = text.charCodeAt(i);
      if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        if (++depth > max) return TOO_DEEP;
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
        depth--;
      } else if (c <= SPACE) {
        continue;
      }
      last = c;
    }
    if (quote === -1) break;
    i = afterString(text, quote);
    if (depth !== 1) {
      last = 0;
      continue;
    }
    if (last === OPEN_OBJECT || last === COMMA) {
      modelKey = i - quote === MODEL_KEY.length + 2 && text.startsWith(MODEL_KEY, quote + 1);
      if (modelKey) models++;
      else if (i - quote <= MAX_ESCAPED_MODEL_KEY && hasBackslash(text, quote + 1, i - 1)) unsure = true;
    } else if (modelKey) {
      start = quote;
      end = i;
      modelKey = false;
    }
    last = 0; // a string, neither bracket, comma nor colon
  }
  if (models !== 1 || unsure || start === -1) return NO_MODEL;
  return { tooDeep: false, model: { start, end } };
}

function hasBackslash(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (text.charCodeAt(i) === BACKSLASH) return true;
  return false;
}

/**
 * The index after the string opened at `open` (the text's length when it never
 * closes). A quote is escaped when an odd number of backslashes precedes it;
 * each run of backslashes is looked at once, so this stays linear.
 */
function afterString(text: string, open: number): number {
  let from = open + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return text.length;
    let backslashes = 0;
    while (quote - backslashes - 1 > open && text.charCodeAt(quote - backslashes - 1) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

