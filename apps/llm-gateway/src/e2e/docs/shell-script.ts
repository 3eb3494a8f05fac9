/**
 * The small part of the shell the docs' `curl` examples are written in, read
 * the way bash reads it: words with single and double quotes, backslash
 * escapes and line continuations, `$NAME` / `${NAME}`, `$(… | jq -r PATH)`,
 * commands separated by line breaks or `;`, and `#` comments. Comments right
 * after a command (on its line or the lines that follow it without a blank
 * line) are kept with it: they say what the command answers.
 *
 * Anything else (redirections, `&&`, a pipe outside `$(…)`) is refused, so an
 * example the tests cannot run the way a reader would fails loudly instead of
 * being run differently.
 */

export type WordPart =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'var'; readonly name: string }
  | { readonly kind: 'subst'; readonly script: string };

export type Word = readonly WordPart[];

export interface ShellCommand {
  /** 1-based line of the command's first word, within the script. */
  readonly line: number;
  /** Each stage of a pipeline (`a | b` has two). */
  readonly stages: readonly (readonly Word[])[];
  /** The comment lines that follow it, without their `#`. */
  readonly comments: string[];
}

export class ShellSyntaxError extends Error {}

export function parseScript(script: string): ShellCommand[] {
  const commands: ShellCommand[] = [];
  let i = 0;
  let line = 1;
  let stages: Word[][] = [[]];
  let word: WordPart[] | undefined;
  let commandLine = 0;
  /** The command comments attach to; dropped by a blank line or another command. */
  let last: ShellCommand | undefined;
  let blankRun = false;

  const text = (t: string): void => {
    word ??= [];
    const tail = word[word.length - 1];
    if (tail?.kind === 'text') word[word.length - 1] = { kind: 'text', text: tail.text + t };
    else word.push({ kind: 'text', text: t });
  };
  const endWord = (): void => {
    if (word === undefined) return;
    if (stages.length === 1 && stages[0]!.length === 0) commandLine = line;
    stages[stages.length - 1]!.push(word);
    word = undefined;
  };
  const endCommand = (): void => {
    endWord();
    if (stages[stages.length - 1]!.length === 0) {
      if (stages.length > 1) throw new ShellSyntaxError(`line ${line}: a pipe with nothing after it`);
      return;
    }
    last = { line: commandLine, stages, comments: [] };
    commands.push(last);
    stages = [[]];
  };
  /** `$NAME`, `${NAME}` or `$(…)` at `i` (which is on the `$`); returns false for a lone `$`. */
  const dollar = (): boolean => {
    const rest = script.slice(i + 1);
    const braced = /^\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(rest);
    const bare = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest);
    word ??= [];
    if (braced) {
      word.push({ kind: 'var', name: braced[1]! });
      i += braced[0].length + 1;
      return true;
    }
    if (bare) {
      word.push({ kind: 'var', name: bare[0] });
      i += bare[0].length + 1;
      return true;
    }
    if (rest.startsWith('(')) {
      const end = closingParen(script, i + 2);
      word.push({ kind: 'subst', script: script.slice(i + 2, end) });
      i = end + 1;
      return true;
    }
    return false;
  };

  while (i < script.length) {
    const c = script[i]!;
    if (c === '\n') {
      const wasEmpty = word === undefined && stages.length === 1 && stages[0]!.length === 0;
      endCommand();
      if (wasEmpty && blankRun) last = undefined; // a blank line: later comments describe what comes next
      blankRun = true;
      line++;
      i++;
      continue;
    }
    if (c === ' ' || c === '\t') {
      endWord();
      i++;
      continue;
    }
    blankRun = false;
    if (c === '#' && word === undefined) {
      const end = script.indexOf('\n', i);
      const comment = script.slice(i + 1, end === -1 ? undefined : end);
      endCommand(); // a comment on a command's own line belongs to it
      last?.comments.push(comment);
      i = end === -1 ? script.length : end;
      blankRun = false;
      continue;
    }
    if (c === ';') {
      endCommand();
      last = undefined;
      i++;
      continue;
    }
    if (c === '|') {
      endWord();
      if (stages[stages.length - 1]!.length === 0) throw new ShellSyntaxError(`line ${line}: a pipe with nothing before it`);
      stages.push([]);
      i++;
      continue;
    }
    if ('&<>`'.includes(c)) throw new ShellSyntaxError(`line ${line}: "${c}" is not supported in a docs example`);
    if (c === '\\') {
      if (script[i + 1] === '\n') {
        line++;
        i += 2;
        continue;
      }
      text(script[i + 1] ?? '');
      i += 2;
      continue;
    }
    if (c === "'") {
      const end = script.indexOf("'", i + 1);
      if (end === -1) throw new ShellSyntaxError(`line ${line}: unclosed '`);
      const quoted = script.slice(i + 1, end);
      text(quoted);
      line += quoted.split('\n').length - 1;
      i = end + 1;
      continue;
    }
    if (c === '"') {
      i++;
      word ??= [];
      for (;;) {
        if (i >= script.length) throw new ShellSyntaxError(`line ${line}: unclosed "`);
        const d = script[i]!;
        if (d === '"') {
          i++;
          break;
        }
        if (d === '\\' && '"\\$`\n'.includes(script[i + 1] ?? '')) {
          if (script[i + 1] !== '\n') text(script[i + 1]!);
          i += 2;
          continue;
        }
        if (d === '$' && dollar()) continue;
        if (d === '`') throw new ShellSyntaxError(`line ${line}: backquotes are not supported in a docs example`);
        if (d === '\n') line++;
        text(d);
        i++;
      }
      continue;
    }
    if (c === '$' && dollar()) continue;
    text(c);
    i++;
  }
  endCommand();
  return commands;
}

/** The index of the `)` closing a `$(` whose content starts at `from` (quotes respected). */
function closingParen(script: string, from: number): number {
  let depth = 1;
  for (let i = from; i < script.length; i++) {
    const c = script[i]!;
    if (c === "'") {
      i = script.indexOf("'", i + 1);
      if (i === -1) break;
    } else if (c === '"') {
      for (i++; i < script.length && script[i] !== '"'; i++) if (script[i] === '\\') i++;
    } else if (c === '\\') i++;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  throw new ShellSyntaxError('unclosed $(');
}

/** A word as plain text when it has no variables or substitutions (e.g. the command's name). */
export function literal(word: Word): string | undefined {
  return word.every((p) => p.kind === 'text') ? word.map((p) => (p as { text: string }).text).join('') : undefined;
}
