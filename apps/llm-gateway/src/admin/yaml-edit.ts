/**
 * Edits of the config file that a reviewer can read: only the YAML entries
 * that change are rewritten, everything else (comments, key order, blank
 * lines, quoting, aligned comments) stays byte for byte.
 *
 * The `yaml` Document API locates the nodes (their source ranges); the change
 * is spliced into the original text rather than re-printing the whole
 * document, because re-printing normalises spacing and comment alignment all
 * over the file. Inside a changed entry, unchanged keys keep their text too:
 * setting `strategy` leaves the chain (and its comments) alone.
 *
 * Every edit is checked by parsing the result and comparing the data with the
 * intended value; should the splice ever disagree, the whole document is
 * re-printed through the Document API instead (correct, only noisier).
 */
import { Document, isMap, isNode, isScalar, parseDocument, type Node, type Pair, type YAMLMap } from 'yaml';
import { isPlainObject } from '../plain-object.js';

export type ConfigSection = 'aliases' | 'providers';

/** A plain YAML value (what `toJS` gives and `createNode` takes). */
export type PlainValue = unknown;

const PRINT = { lineWidth: 0 } as const;

interface Splice {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** The config's data as plain values (maps → objects). */
export function configData(text: string): Record<string, unknown> {
  const data: unknown = parseDocument(text).toJS({ maxAliasCount: 100 });
  return isPlainObject(data) ? data : {};
}

/** `text` with `section.name` set to `value` (created at the end of the section if absent). */
export function setEntry(text: string, section: ConfigSection, name: string, value: PlainValue): string {
  const spliced = trySplice(text, (document) => spliceSet(text, document, section, name, value));
  if (spliced !== undefined && matches(spliced, section, name, value)) return spliced;
  const document = parseDocument(text);
  document.setIn([section, name], document.createNode(value));
  return document.toString(PRINT);
}

/** `text` without `section.name` (unchanged when it is absent). */
export function removeEntry(text: string, section: ConfigSection, name: string): string {
  const spliced = trySplice(text, (document) => spliceRemove(text, document, section, name));
  if (spliced !== undefined && matches(spliced, section, name, undefined)) return spliced;
  const document = parseDocument(text);
  document.deleteIn([section, name]);
  return document.toString(PRINT);
}

function trySplice(text: string, plan: (document: Document.Parsed) => Splice[] | undefined): string | undefined {
  const document = parseDocument(text);
  if (document.errors.length > 0) return undefined;
  const splices = plan(document);
  if (splices === undefined) return undefined;
  let out = text;
  for (const s of [...splices].sort((a, b) => b.start - a.start)) out = out.slice(0, s.start) + s.text + out.slice(s.end);
  return out;
}

function matches(text: string, section: ConfigSection, name: string, value: PlainValue): boolean {
  const document = parseDocument(text);
  if (document.errors.length > 0) return false;
  const sectionData = configData(text)[section] as Record<string, unknown> | undefined;
  const actual = sectionData?.[name];
  return value === undefined ? actual === undefined && !(sectionData !== undefined && name in sectionData) : deepEqual(actual, value);
}

function blockMap(node: unknown): YAMLMap | undefined {
  return isMap(node) && node.flow !== true && node.range != null ? node : undefined;
}

function pairOf(map: YAMLMap, key: string): Pair<Node, Node | null> | undefined {
  return (map.items as Pair<Node, Node | null>[]).find((pair) => isScalar(pair.key) && String(pair.key.value) === key);
}

function spliceSet(text: string, document: Document.Parsed, section: ConfigSection, name: string, value: PlainValue): Splice[] | undefined {
  const root = blockMap(document.contents);
  if (root === undefined) return undefined;
  const sectionPair = pairOf(root, section);
  if (sectionPair === undefined) {
    // No such section yet: append it at the end of the file.
    const prefix = text.length === 0 || text.endsWith('\n') ? '' : '\n';
    return [{ start: text.length, end: text.length, text: `${prefix}${render(section, { [name]: value }, 0)}\n` }];
  }
  const sectionMap = blockMap(sectionPair.value);
  if (sectionMap === undefined) {
    if (isScalar(sectionPair.value) && sectionPair.value.value === null) return [replacePair(text, sectionPair, { [name]: value })];
    return undefined;
  }
  return setInMap(text, sectionMap, name, value);
}

/** Splices that make `map[key]` equal `value`, recursing into block maps so unchanged keys keep their text. */
function setInMap(text: string, map: YAMLMap, key: string, value: PlainValue): Splice[] | undefined {
  const pair = pairOf(map, key);
  if (pair === undefined) return [insertPair(text, map, key, value)];
  if (pair.value !== null && deepEqual(toPlain(pair.value), value)) return [];
  const inner = blockMap(pair.value);
  if (inner === undefined || !isPlainObject(value) || inner.items.length === 0) return [replacePair(text, pair, value)];
  const splices: Splice[] = [];
  for (const item of inner.items as Pair<Node, Node | null>[]) {
    if (!isScalar(item.key)) return [replacePair(text, pair, value)];
    const itemKey = String(item.key.value);
    if (!(itemKey in value)) splices.push(removePair(text, item));
  }
  const order = Object.keys(value);
  for (const [index, [childKey, childValue]] of Object.entries(value).entries()) {
    // A new key goes before the next key of the intended order that the map has (`strategy` before `chain`).
    const next = order.slice(index + 1).map((key) => pairOf(inner, key)).find((pair) => pair !== undefined);
    const child = pairOf(inner, childKey) === undefined && next !== undefined ? [insertBefore(text, next, childKey, childValue)] : setInMap(text, inner, childKey, childValue);
    if (child === undefined) return [replacePair(text, pair, value)];
    splices.push(...child);
  }
  return splices;
}

function spliceRemove(text: string, document: Document.Parsed, section: ConfigSection, name: string): Splice[] | undefined {
  const root = blockMap(document.contents);
  if (root === undefined) return undefined;
  const sectionMap = blockMap(pairOf(root, section)?.value);
  if (sectionMap === undefined) return undefined;
  const pair = pairOf(sectionMap, name);
  return pair === undefined ? [] : [removePair(text, pair)];
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

function lineEnd(text: string, offset: number): number {
  const nl = text.indexOf('\n', offset);
  return nl === -1 ? text.length : nl + 1;
}

/** Where a pair's own text ends: a block value's range already ends at the next line; keep that newline. */
function contentEnd(text: string, pair: Pair<Node, Node | null>): number {
  const keyEnd = pair.key.range![1];
  const end = pair.value?.range?.[1] ?? keyEnd;
  return end > keyEnd && text[end - 1] === '\n' ? end - 1 : end;
}

/** Replaces `key: value` from the key to the end of the value; a trailing comment on the line stays. */
function replacePair(text: string, pair: Pair<Node, Node | null>, value: PlainValue): Splice {
  const start = pair.key.range![0];
  const indent = start - lineStart(text, start);
  return { start, end: contentEnd(text, pair), text: render(String((pair.key as { value: unknown }).value), value, indent) };
}

function removePair(text: string, pair: Pair<Node, Node | null>): Splice {
  const start = lineStart(text, pair.key.range![0]);
  return { start, end: lineEnd(text, contentEnd(text, pair)), text: '' };
}

/** Adds `key: value` after the map's last entry, at the indentation of its first key. */
function insertPair(text: string, map: YAMLMap, key: string, value: PlainValue): Splice {
  const pairs = map.items as Pair<Node, Node | null>[];
  const first = pairs[0];
  const last = pairs[pairs.length - 1];
  if (first === undefined || last === undefined) {
    const at = map.range![1];
    return { start: at, end: at, text: `${render(key, value, 0)}\n` };
  }
  const indent = first.key.range![0] - lineStart(text, first.key.range![0]);
  const at = lineEnd(text, contentEnd(text, last));
  const newline = at === text.length && !text.endsWith('\n') ? '\n' : '';
  return { start: at, end: at, text: `${newline}${' '.repeat(indent)}${render(key, value, indent)}\n` };
}

/** Adds `key: value` on its own line(s) just above `pair`, at its indentation. */
function insertBefore(text: string, pair: Pair<Node, Node | null>, key: string, value: PlainValue): Splice {
  const at = lineStart(text, pair.key.range![0]);
  const indent = pair.key.range![0] - at;
  return { start: at, end: at, text: `${' '.repeat(indent)}${render(key, value, indent)}\n` };
}

/** `key: value` as block YAML, continuation lines indented by `indent`; no trailing newline. */
function render(key: string, value: PlainValue, indent: number): string {
  const printed = new Document({ [key]: value }).toString(PRINT).replace(/\n$/, '');
  return printed.split('\n').join(`\n${' '.repeat(indent)}`);
}

function toPlain(node: unknown): unknown {
  return isNode(node) ? node.toJSON() : node;
}


export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => key in b && deepEqual(a[key], b[key]));
  }
  return false;
}

