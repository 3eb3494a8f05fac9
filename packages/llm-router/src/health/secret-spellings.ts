/**
 * A secret as it may be written in JSON text. An upstream that echoes our key
 * in an error body may escape any of its characters (`sk\u002dabc`, PHP's
 * `\/`, Go's `\u003c`), and every JSON client decodes those back to the key;
 * matching only the literal text lets such a body carry the key to the client.
 * The pattern matches each character as itself, as `\uXXXX` (hex in either
 * case) or as its short escape, in any mix. It is a plain sequence of fixed
 * alternatives: linear in the text, no backtracking to blow up.
 */
const SHORT_ESCAPES: Readonly<Record<string, string>> = { '/': '\\/', '"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** Compiled patterns by secret; a config holds a handful, cleared when it grows past a bound (configs change). */
const cache = new Map<string, RegExp>();
const CACHE_MAX = 256;

export function secretSpellings(secret: string): RegExp {
  let pattern = cache.get(secret);
  if (pattern === undefined) {
    if (cache.size >= CACHE_MAX) cache.clear();
    pattern = new RegExp(spellingSource(secret), 'g');
    cache.set(secret, pattern);
  }
  pattern.lastIndex = 0;
  return pattern;
}

function spellingSource(secret: string): string {
  let source = '';
  // Code units, not code points: JSON escapes a character outside the BMP as two `\uXXXX` (a surrogate pair).
  for (let i = 0; i < secret.length; i++) {
    const unit = secret[i]!;
    const hex = secret.charCodeAt(i).toString(16).padStart(4, '0');
    const alternatives = [escapeRegExp(unit), `\\\\u${[...hex].map(hexDigit).join('')}`];
    const short = SHORT_ESCAPES[unit];
    if (short !== undefined) alternatives.push(escapeRegExp(short));
    source += `(?:${alternatives.join('|')})`;
  }
  return source;
}

/** One hex digit of a `\u` escape, letters in either case. */
function hexDigit(digit: string): string {
  return /[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
