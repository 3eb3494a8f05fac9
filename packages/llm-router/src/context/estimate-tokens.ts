/**
 * A cheap, dependency-free estimate of how many tokens a text costs, used to
 * decide whether a prompt obviously does not fit a target's context window.
 *
 * How: one pass over the UTF-16 code units, cutting the text into the pieces
 * a GPT-style (o200k / Llama 3) pre-tokenizer makes, and charging each piece:
 * - a word (`Upper* lower+`, so camelCase splits as the tokenizers split it),
 *   with the one space or punctuation mark before it absorbed: 1 token up to
 *   WORD_CHARS letters, then 1 more per LONG_WORD_CHARS letters (long German
 *   compounds and rare terms break into several tokens);
 * - a digit run: 1 token per 3 digits (the tokenizers group digits by three);
 * - a punctuation run: 1 token per PUNCT_CHARS marks (`);`, `=>` are one token);
 * - a whitespace run holding a newline, or several spaces: 1 token;
 * - any other character (CJK, emoji, symbols): 1 token (a surrogate pair once).
 *
 * It errs low rather than high (a target wrongly skipped is worse than one
 * tried and failed over from). Measured against the o200k tokenizer on the
 * corpus in fixtures/corpus (English and German prose, TypeScript, Python,
 * YAML, JSON): see estimate-tokens.test.ts and docs/api/chat.md (Deep fallback) for the figures.
 * Time is linear in the text length, about 1 ms per 300 kB here.
 */

/** A word piece this long or shorter is one token. */
const WORD_CHARS = 10;
/** Each further this-many letters of a long word cost one more token. */
const LONG_WORD_CHARS = 2;
/** Punctuation marks per token. */
const PUNCT_CHARS = 2;

// Character classes of one UTF-16 code unit.
const SPACE = 0;
const BREAK = 1; // \n \r \t
const LOWER = 2;
const UPPER = 3;
const DIGIT = 4;
const PUNCT = 5;
const OTHER = 6;

/**
 * The class of every UTF-16 code unit, looked up once per character (64 KiB,
 * built at load): the pass does one array read per character instead of a
 * chain of comparisons.
 */
const CLASS = new Uint8Array(65_536).map((_, c) => classify(c));

function classify(c: number): number {
  if (c >= 97 && c <= 122) return LOWER;
  if (c >= 65 && c <= 90) return UPPER;
  if (c >= 48 && c <= 57) return DIGIT;
  if (c === 32) return SPACE;
  if (c === 10 || c === 13 || c === 9) return BREAK;
  if (c < 128) return PUNCT;
  // Latin-1 and Latin Extended-A/B letters (ä ö ü ß é ł …) are word letters; × and ÷ are not.
  if (c >= 0xdf && c <= 0x24f) return c === 0xf7 ? OTHER : LOWER;
  if (c >= 0xc0 && c < 0xdf) return c === 0xd7 ? OTHER : UPPER;
  return OTHER;
}

function classOf(c: number): number {
  return CLASS[c]!;
}

/** Estimated tokens of `text`. */
export function estimateTokens(text: string): number {
  const n = text.length;
  let tokens = 0;
  let i = 0;
  while (i < n) {
    const k = classOf(text.charCodeAt(i));
    let j = i + 1;
    if (k === LOWER || k === UPPER) {
      // One word piece: capitals then lower-case letters; a capital after a lower-case letter starts the next.
      let lower = k === LOWER;
      for (; j < n; j++) {
        const kk = classOf(text.charCodeAt(j));
        if (kk === LOWER) lower = true;
        else if (kk !== UPPER || lower) break;
      }
      const length = j - i;
      tokens += length <= WORD_CHARS ? 1 : 1 + Math.ceil((length - WORD_CHARS) / LONG_WORD_CHARS);
    } else if (k === DIGIT) {
      while (j < n && classOf(text.charCodeAt(j)) === DIGIT) j++;
      tokens += Math.ceil((j - i) / 3);
    } else if (k === PUNCT) {
      while (j < n && classOf(text.charCodeAt(j)) === PUNCT) j++;
      // The mark right before a word joins that word's token (`.open`, `"name`).
      const length = j - i - (j < n && isLetter(classOf(text.charCodeAt(j))) ? 1 : 0);
      tokens += Math.ceil(length / PUNCT_CHARS);
    } else if (k === SPACE || k === BREAK) {
      let hasBreak = k === BREAK;
      for (; j < n; j++) {
        const kk = classOf(text.charCodeAt(j));
        if (kk === BREAK) hasBreak = true;
        else if (kk !== SPACE) break;
      }
      // A single space joins the next word or mark; a line break or indentation is a token of its own.
      if (hasBreak || j - i > 1 || j === n || !joinsSpace(classOf(text.charCodeAt(j)))) tokens += 1;
    } else {
      const c = text.charCodeAt(i);
      if (c < 0xdc00 || c > 0xdfff) tokens += 1; // a low surrogate belongs to the character before it
    }
    i = j;
  }
  return tokens;
}

function isLetter(k: number): boolean {
  return k === LOWER || k === UPPER;
}

function joinsSpace(k: number): boolean {
  return k === LOWER || k === UPPER || k === PUNCT;
}
