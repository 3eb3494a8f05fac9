import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import { RouterError } from '../errors.js';

/** A location in the parsed YAML: map keys and sequence indexes from the root. */
export type ConfigPath = readonly (string | number)[];

export interface FailOptions {
  /** The alias the problem belongs to; named in the message. */
  readonly alias?: string | undefined;
  /** Point at the key of the last path segment rather than its value (unknown keys). */
  readonly atKey?: boolean;
}

/**
 * The parsed YAML plus what is needed to say *where* a problem is: every
 * validation error names the file, the line and (when there is one) the alias,
 * so an operator can fix a broken config without guessing.
 */
export class ConfigSource {
  private constructor(
    readonly name: string,
    private readonly document: Document.Parsed,
    private readonly lines: LineCounter,
    /** The document as plain data (maps → objects, sequences → arrays). */
    readonly data: unknown,
  ) {}

  /** Parses YAML text; syntax errors and duplicate keys fail here with their line. */
  static parse(text: string, name: string): ConfigSource {
    const lines = new LineCounter();
    const document = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
    const first = document.errors[0];
    if (first !== undefined) {
      const offset = first.pos[0];
      const line = lines.linePos(offset).line;
      if (first.code === 'DUPLICATE_KEY') {
        const key = /^["']?([^"':\n]+)/.exec(text.slice(offset))?.[1]?.trim() ?? '?';
        const alias = aliasAt(document, offset);
        const what = alias === key ? `duplicate alias ${key}` : `duplicate key ${key}`;
        throw configError(name, line, alias, `${what} (each key may appear once)`);
      }
      const reason = first.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? first.code;
      throw configError(name, line, undefined, `YAML syntax error: ${reason}`);
    }
    return new ConfigSource(name, document, lines, document.toJS({ maxAliasCount: 100 }));
  }

  /** The 1-based line of the value (or key) at `path`, if the document has it. */
  lineOf(path: ConfigPath, atKey = false): number | undefined {
    let node: unknown = this.document.contents;
    let keyNode: unknown;
    for (const segment of path) {
      keyNode = undefined;
      if (isMap(node)) {
        const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === String(segment));
        if (pair === undefined) return undefined;
        keyNode = pair.key;
        node = pair.value;
      } else if (isSeq(node) && typeof segment === 'number') {
        node = node.items[segment];
      } else {
        return undefined;
      }
    }
    const target = (atKey ? keyNode : node) ?? keyNode;
    const range = (target as { range?: [number, number, number] } | null | undefined)?.range;
    return range === undefined ? undefined : this.lines.linePos(range[0]).line;
  }

  /** Throws the one invalid_config error for a problem at `path`. */
  fail(path: ConfigPath, message: string, options: FailOptions = {}): never {
    // A missing value (e.g. `mana/x:` with nothing after it) has no node: point at its key.
    const line = this.lineOf(path, options.atKey === true) ?? this.lineOf(path, true) ?? this.nearestLine(path);
    throw configError(this.name, line, options.alias, message);
  }

  private nearestLine(path: ConfigPath): number | undefined {
    for (let end = path.length - 1; end > 0; end--) {
      const line = this.lineOf(path.slice(0, end), true);
      if (line !== undefined) return line;
    }
    return undefined;
  }
}

/** `invalid config at aliases.yaml line 12 (alias mana/long-form): chain must list at least one target` */
function configError(source: string, line: number | undefined, alias: string | undefined, message: string): RouterError {
  const where = [line === undefined ? source : `${source} line ${line}`, alias === undefined ? '' : ` (alias ${alias})`].join('');
  return new RouterError('invalid_config', `invalid config at ${where}: ${message}`);
}

/** The alias whose entry (key or value) contains `offset`, if any: names it in duplicate-key errors. */
function aliasAt(document: Document.Parsed, offset: number): string | undefined {
  const root = document.contents;
  if (!isMap(root)) return undefined;
  const aliases = root.items.find((pair) => isScalar(pair.key) && pair.key.value === 'aliases')?.value;
  if (!isMap(aliases)) return undefined;
  for (const pair of aliases.items) {
    if (!isScalar(pair.key)) continue;
    const start = pair.key.range?.[0];
    const end = (pair.value as { range?: [number, number, number] } | null)?.range?.[2] ?? pair.key.range?.[2];
    if (start !== undefined && end !== undefined && offset >= start && offset <= end) return String(pair.key.value);
  }
  return undefined;
}
