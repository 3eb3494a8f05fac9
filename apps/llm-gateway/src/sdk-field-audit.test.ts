/**
 * Every field of the pinned SDKs' create-request types has a row in the docs'
 * "Every request field" table: `@anthropic-ai/sdk`'s `MessageCreateParams`
 * (docs/api/messages.md) and `openai`'s `ResponseCreateParams`
 * (docs/api/responses.md). The fields are read from the SDKs' own type
 * declarations with the TypeScript compiler, so an SDK upgrade that adds a
 * field fails here until the docs say what the gateway does with it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const APP = new URL('../', import.meta.url);
const DOCS = new URL('../../docs/api/', APP);

/** The property names of `typeName` (an interface or type alias) declared in `file`, as the checker sees them (inherited ones too). */
function declaredFields(file: string, typeName: string): string[] {
  const program = ts.createProgram([file], { noEmit: true, skipLibCheck: true, types: [] });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  if (source === undefined) throw new Error(`${file} not found`);
  let fields: string[] | undefined;
  const visit = (node: ts.Node): void => {
    if ((ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) && node.name.text === typeName) {
      fields = checker.getPropertiesOfType(checker.getTypeAtLocation(node)).map((p) => p.name);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (fields === undefined) throw new Error(`${typeName} is not declared in ${file}`);
  return fields;
}

/** The fields named (in backticks) in the first column of the table under "## Every request field". */
function documentedFields(doc: string): Set<string> {
  const text = readFileSync(new URL(doc, DOCS), 'utf8');
  const start = text.indexOf('## Every request field');
  if (start === -1) throw new Error(`${doc} has no "Every request field" section`);
  const section = text.slice(start, text.indexOf('\n## ', start + 1));
  const names = new Set<string>();
  for (const line of section.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const first = line.split('|')[1]!;
    for (const m of first.matchAll(/`([a-z_]+)`/g)) names.add(m[1]!);
  }
  return names;
}

const sdkFile = (path: string): string => fileURLToPath(new URL(`node_modules/${path}`, APP));

describe('SDK field audit', () => {
  it.each([
    { sdk: '@anthropic-ai/sdk', file: '@anthropic-ai/sdk/resources/messages/messages.d.ts', type: 'MessageCreateParamsBase', doc: 'messages.md' },
    { sdk: 'openai', file: 'openai/resources/responses/responses.d.ts', type: 'ResponseCreateParamsBase', doc: 'responses.md' },
  ])("every field of $sdk's $type has a row in docs/api/$doc", ({ file, type, doc }) => {
    const fields = declaredFields(sdkFile(file), type);
    // The fields every request of these APIs has: the reading works.
    expect(fields).toEqual(expect.arrayContaining(['model', 'stream', 'tools']));
    const documented = documentedFields(doc);
    expect(fields.filter((f) => !documented.has(f))).toEqual([]);
  }, 60_000);
});
