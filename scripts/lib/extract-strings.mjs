/**
 * Pulls string values out of source and config files without parsing them fully:
 * a small, string-aware tokenizer per language family that skips comments and
 * keeps each string's offset (the position of its opening quote, as ESLint
 * reports a literal). Used by validate-llm-strings.mjs.
 *
 * A candidate is `{ offset, value, kind }`:
 *   kind 'whole'  — the whole string value (a literal, a template without `${}`, a YAML/.env scalar)
 *   kind 'head'   — the text before the first `${…}` / `{…}` of a template or f-string
 *   moduleSpecifier: true for `from '…'`, `import '…'`, `import('…')`, `require('…')`, `declare module '…'`
 *
 * Known limit (documented in the lint gate's README): strings do not span lines
 * (except templates and Python triple quotes), so a stray apostrophe in markup
 * text can hide a string on the same line only.
 */

const NEWLINE = 10;
const BACKSLASH = 92;

/** Language family for a file name. */
export function familyOf(file) {
  const base = file.slice(file.lastIndexOf('/') + 1);
  if (base.startsWith('.env')) return 'env';
  const ext = base.slice(base.lastIndexOf('.') + 1).toLowerCase();
  switch (ext) {
    case 'py':
      return 'python';
    case 'yaml':
    case 'yml':
      return 'yaml';
    case 'vue':
    case 'svelte':
      return 'markup';
    default:
      return 'js'; // ts tsx js jsx mjs cjs json
  }
}

export function extractStrings(text, family) {
  switch (family) {
    case 'python':
      return extractPython(text);
    case 'yaml':
      return extractYaml(text);
    case 'env':
      return extractEnv(text);
    case 'markup':
      return extractJs(text, true);
    default:
      return extractJs(text, false);
  }
}

const ESCAPES = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', v: '\v', 0: '\0' };

/** Resolves simple backslash escapes (`\/`, `\'`, `\n`); enough to compare with a model id. */
function unescape(raw) {
  if (!raw.includes('\\')) return raw;
  return raw.replace(/\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|\r?\n|.)/g, (_, esc) => {
    if (esc[0] === 'u' && esc.length > 1) return String.fromCodePoint(parseInt(esc.replace(/[u{}]/g, ''), 16));
    if (esc[0] === 'x' && esc.length === 3) return String.fromCharCode(parseInt(esc.slice(1), 16));
    if (esc === '\n' || esc === '\r\n') return '';
    return ESCAPES[esc] ?? esc;
  });
}

function isWordChar(code) {
  return (
    (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 95 || code === 36
  );
}

function isSpace(code) {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

/** The identifier ending just before `end` (after skipping whitespace), and where it starts. */
function wordBefore(text, end) {
  let i = end - 1;
  while (i >= 0 && isSpace(text.charCodeAt(i))) i--;
  const stop = i + 1;
  while (i >= 0 && isWordChar(text.charCodeAt(i))) i--;
  return { word: text.slice(i + 1, stop), start: i + 1, last: stop > 0 ? text.charCodeAt(stop - 1) : -1, lastAt: stop - 1 };
}

const SPECIFIER_WORDS = new Set(['from', 'import', 'module']);
const CALLS_WITH_SPECIFIER = new Set(['import', 'require']);

/** Whether the string starting at `start` names a module (see the ESLint rule's isModuleSpecifier). */
function isModuleSpecifier(text, start) {
  const before = wordBefore(text, start);
  if (before.word !== '') return SPECIFIER_WORDS.has(before.word);
  if (before.last !== 40 /* ( */) return false;
  return CALLS_WITH_SPECIFIER.has(wordBefore(text, before.lastAt).word);
}

const REGEX_KEYWORDS = new Set([
  'return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', 'yield', 'await', 'instanceof',
]);
const REGEX_AFTER = new Set('(,=:[!&|?{};+-*%<>~^'.split('').map((c) => c.charCodeAt(0)));

/** Whether a `/` at `at` starts a regular expression literal rather than a division. */
function regexAllowed(text, at) {
  const before = wordBefore(text, at);
  if (before.word !== '') return REGEX_KEYWORDS.has(before.word);
  return before.last === -1 || REGEX_AFTER.has(before.last);
}

/**
 * JS/TS/JSX/JSON, and Vue/Svelte files (`markup`: also skips `<!-- … -->`).
 * Template literals nest through `${ … }`; only the head before the first
 * `${` is a candidate, as in the ESLint rule.
 */
function extractJs(text, markup) {
  const out = [];
  const n = text.length;
  /** Brace depth at which each open `${` returns to its template. */
  const templates = [];
  let depth = 0;
  let i = 0;

  /** Scans template text from `i`; returns where code resumes. `start` is the backtick (head only). */
  const scanTemplate = (from, start) => {
    let j = from;
    while (j < n) {
      const c = text.charCodeAt(j);
      if (c === BACKSLASH) {
        j += 2;
        continue;
      }
      if (c === 96 /* ` */) {
        if (start >= 0) out.push({ offset: start, value: unescape(text.slice(start + 1, j)), kind: 'whole' });
        return j + 1;
      }
      if (c === 36 /* $ */ && text.charCodeAt(j + 1) === 123 /* { */) {
        if (start >= 0) out.push({ offset: start, value: unescape(text.slice(start + 1, j)), kind: 'head' });
        templates.push(depth);
        depth++;
        return j + 2;
      }
      j++;
    }
    return n;
  };

  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 47 /* / */) {
      const next = text.charCodeAt(i + 1);
      if (next === 47) {
        const end = text.indexOf('\n', i);
        i = end < 0 ? n : end;
      } else if (next === 42 /* * */) {
        const end = text.indexOf('*/', i + 2);
        i = end < 0 ? n : end + 2;
      } else if (regexAllowed(text, i)) {
        let j = i + 1;
        let inClass = false;
        while (j < n) {
          const r = text.charCodeAt(j);
          if (r === BACKSLASH) j++;
          else if (r === NEWLINE) break;
          else if (r === 91 /* [ */) inClass = true;
          else if (r === 93 /* ] */) inClass = false;
          else if (r === 47 && !inClass) break;
          j++;
        }
        i = j + 1;
      } else {
        i++;
      }
    } else if (c === 39 /* ' */ || c === 34 /* " */) {
      let j = i + 1;
      while (j < n) {
        const s = text.charCodeAt(j);
        if (s === c || s === NEWLINE) break;
        if (s === BACKSLASH) j++;
        j++;
      }
      const value = unescape(text.slice(i + 1, j));
      out.push({ offset: i, value, kind: 'whole', moduleSpecifier: isModuleSpecifier(text, i) });
      // Vue/Svelte attribute values hold expressions: `:model="'groq/…'"`.
      if (markup && /['"`]/.test(value)) {
        for (const inner of extractJs(text.slice(i + 1, j), false)) out.push({ ...inner, offset: inner.offset + i + 1 });
      }
      i = j + 1;
    } else if (c === 96) {
      i = scanTemplate(i + 1, i);
    } else if (c === 123 /* { */) {
      depth++;
      i++;
    } else if (c === 125 /* } */) {
      depth--;
      i++;
      if (templates.length > 0 && templates[templates.length - 1] === depth) {
        templates.pop();
        i = scanTemplate(i, -1);
      }
    } else if (markup && c === 60 /* < */ && text.startsWith('<!--', i)) {
      const end = text.indexOf('-->', i + 4);
      i = end < 0 ? n : end + 3;
    } else {
      i++;
    }
  }
  return out;
}

/** Python: `#` comments, '…' "…" '''…''' """…""" with r/b/u/f prefixes; f-strings give a head. */
function extractPython(text) {
  const out = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 35 /* # */) {
      const end = text.indexOf('\n', i);
      i = end < 0 ? n : end;
      continue;
    }
    if (c !== 39 && c !== 34) {
      i++;
      continue;
    }
    // String prefix letters directly before the quote (f, r, b, u, rf, …).
    let p = i;
    while (p > 0 && p > i - 2 && /[rRbBuUfF]/.test(text[p - 1])) p--;
    if (p > 0 && isWordChar(text.charCodeAt(p - 1))) p = i;
    const prefix = text.slice(p, i).toLowerCase();
    const raw = prefix.includes('r');
    const formatted = prefix.includes('f');
    const triple = text.charCodeAt(i + 1) === c && text.charCodeAt(i + 2) === c;
    const open = triple ? 3 : 1;
    let j = i + open;
    while (j < n) {
      const s = text.charCodeAt(j);
      if (s === BACKSLASH && !raw) {
        j += 2;
        continue;
      }
      if (s === c && (!triple || (text.charCodeAt(j + 1) === c && text.charCodeAt(j + 2) === c))) break;
      if (s === NEWLINE && !triple) break;
      j++;
    }
    const body = text.slice(i + open, j);
    const value = raw ? body : unescape(body);
    const brace = formatted ? value.search(/\{(?!\{)/) : -1;
    if (brace >= 0) out.push({ offset: p, value: value.slice(0, brace), kind: 'head' });
    else out.push({ offset: p, value, kind: 'whole' });
    i = j + open;
  }
  return out;
}

/**
 * YAML, line by line: plain scalars (keys and values, ended by `: `, ` #` and, in
 * flow collections, `, ] }`), single- and double-quoted scalars; comments skipped.
 * A plain scalar is taken whole, so prose mentioning a model is not a model id.
 */
function extractYaml(text) {
  const out = [];
  const n = text.length;
  let lineStart = 0;
  while (lineStart < n) {
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = n;
    let i = lineStart;
    let flow = 0;
    while (i < lineEnd) {
      const c = text.charCodeAt(i);
      const next = i + 1 < lineEnd ? text.charCodeAt(i + 1) : 32;
      if (c === 32 || c === 9 || c === 13) {
        i++;
      } else if (c === 35 /* # */) {
        break;
      } else if ((c === 45 /* - */ || c === 58 /* : */ || c === 63 /* ? */) && (next === 32 || next === 9 || next === 13)) {
        i++;
      } else if (c === 91 || c === 123) {
        flow++;
        i++;
      } else if (c === 93 || c === 125) {
        flow = Math.max(0, flow - 1);
        i++;
      } else if (c === 44 /* , */ && flow > 0) {
        i++;
      } else if (c === 39 || c === 34) {
        let j = i + 1;
        while (j < lineEnd) {
          const s = text.charCodeAt(j);
          if (c === 34 && s === BACKSLASH) {
            j += 2;
            continue;
          }
          if (s === c) {
            if (c === 39 && text.charCodeAt(j + 1) === 39) {
              j += 2;
              continue;
            }
            break;
          }
          j++;
        }
        const body = text.slice(i + 1, j);
        out.push({ offset: i, value: c === 39 ? body.replaceAll("''", "'") : unescape(body), kind: 'whole' });
        i = j + 1;
      } else {
        // Plain scalar: up to `: `, ` #`, end of line, or a flow indicator inside [ ] / { }.
        let j = i;
        while (j < lineEnd) {
          const s = text.charCodeAt(j);
          const after = j + 1 < lineEnd ? text.charCodeAt(j + 1) : 32;
          if (s === 58 && (after === 32 || after === 9 || after === 13)) break;
          if (s === 35 && (text.charCodeAt(j - 1) === 32 || text.charCodeAt(j - 1) === 9)) break;
          if (flow > 0 && (s === 44 || s === 93 || s === 125)) break;
          j++;
        }
        let end = j;
        while (end > i && isSpace(text.charCodeAt(end - 1))) end--;
        if (end > i) out.push({ offset: i, value: text.slice(i, end), kind: 'whole' });
        i = j;
        if (j < lineEnd && text.charCodeAt(j) === 35) break;
      }
    }
    lineStart = lineEnd + 1;
  }
  return out;
}

/** .env: `KEY=value`, optional `export`, quoted or bare values, `#` comments. */
function extractEnv(text) {
  const out = [];
  const line = /^[ \t]*(?:export[ \t]+)?[A-Za-z_][A-Za-z0-9_.-]*[ \t]*=[ \t]*/gm;
  let match;
  while ((match = line.exec(text)) !== null) {
    const start = match.index + match[0].length;
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const quote = text[start];
    if (quote === '"' || quote === "'") {
      const close = text.indexOf(quote, start + 1);
      const stop = close < 0 || close > end ? end : close;
      const body = text.slice(start + 1, stop);
      out.push({ offset: start, value: quote === '"' ? unescape(body) : body, kind: 'whole' });
    } else {
      let stop = end;
      const hash = text.slice(start, end).search(/(^|[ \t])#/);
      if (hash >= 0) stop = start + hash;
      const value = text.slice(start, stop).trim();
      if (value !== '') out.push({ offset: start, value, kind: 'whole' });
    }
    line.lastIndex = end;
  }
  return out;
}
