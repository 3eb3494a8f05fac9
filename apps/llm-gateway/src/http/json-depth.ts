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

const BACKSLASH = 0x5c; // \
const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d; // ]
const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d; // }

/** True when the JSON text nests arrays/objects deeper than `max`. */
export function exceedsJsonDepth(text: string, max: number): boolean {
  let depth = 0;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const quote = text.indexOf('"', i);
    const end = quote === -1 ? n : quote;
    // The structure between two strings: count its brackets.
    for (; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        if (++depth > max) return true;
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
        depth--;
      }
    }
    if (quote === -1) return false;
    i = afterString(text, quote);
  }
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

