import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RuleTester, type InvalidTestCase, type TestCaseError } from '@typescript-eslint/rule-tester';
import { MANA_LLM, type ManaLlmAliasKey } from '@mana/llm-aliases';
import { afterAll, describe, it } from 'vitest';
import { noRawModelString, type MessageIds, type Options } from './no-raw-model-string.js';

RuleTester.afterAll = afterAll;
RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;

const corpusDir = fileURLToPath(new URL('../../test-corpus/', import.meta.url));
const manifest = JSON.parse(readFileSync(path.join(corpusDir, 'manifest.json'), 'utf8')) as {
  aliasConfig: string;
  files: Record<
    string,
    { line: number; column: number; value: string; use: ManaLlmAliasKey | null; fix?: string | null }[]
  >;
};
const aliasConfig = path.join(corpusDir, manifest.aliasConfig);
const withConfig: Options = [{ aliasConfig }];

const ruleTester = new RuleTester({
  languageOptions: { parserOptions: { ecmaFeatures: { jsx: true } } },
});

const IMPORT = "import { MANA_LLM } from '@mana/llm-aliases';\n";

/**
 * The corpus file with one suggestion applied: the string at line:column replaced
 * by `fix`, and the import added before the first statement when the file lacks it.
 */
function withSuggestion(code: string, line: number, column: number, fix: string): string {
  const lines = code.split('\n');
  const start = lines.slice(0, line - 1).reduce((sum, text) => sum + text.length + 1, 0) + column - 1;
  const quote = code[start];
  let end = start + 1;
  while (code[end] !== quote) end += code[end] === '\\' ? 2 : 1;
  const replaced = code.slice(0, start) + fix + code.slice(end + 1);
  if (code.includes(IMPORT)) return replaced;
  const firstStatement = replaced.search(/^(?!\/\/)/m);
  return replaced.slice(0, firstStatement) + IMPORT + replaced.slice(firstStatement);
}

/** A model with an alias: reported with one suggestion, the alias constant in its place (`output`). */
function suggestsAlias(line: number, column: number, output: string): TestCaseError<MessageIds> {
  return { messageId: 'rawModelStringUseAlias', line, column, suggestions: [{ messageId: 'replaceWithAlias', output }] };
}

ruleTester.run('no-raw-model-string', noRawModelString, {
  valid: [
    // Near-misses: URLs, prose, other namespaces, prefixes without a model.
    "const repo = 'https://github.com/ollama/ollama';",
    "const base = 'http://localhost:11434/api/tags';",
    "const note = 'ollama is down, falling back to groq';",
    "const note = 'see groq/llama-3.1-8b-instant in the docs';",
    "const provider = 'ollama';",
    "const prefix = 'ollama/';",
    "const alias = 'mana/long-form';",
    "const other = 'openai/gpt-4o';",
    "const cased = 'Ollama/gemma3:4b';",
    "const file = './ollama/models.json';",
    "const glued = 'my-ollama/gemma3:4b';",
    'const late = `${prefix}ollama/gemma3:4b`;',
    'const url = `https://example.com/ollama/${version}`;',
    'const re = /groq\\/llama-3\\.1-8b-instant/;',
    // Module names are not model ids.
    "import { Ollama } from 'ollama/browser';",
    "export * from 'groq/sdk';",
    "export { thing } from 'ollama/browser';",
    "const lib = import('ollama/browser');",
    "const lib = require('ollama/browser');",
    "import lib = require('ollama/browser');",
    "type T = import('ollama/browser').Ollama;",
    "declare module 'ollama/browser' {}",
    // Comments.
    '// const model = "groq/llama-3.1-8b-instant";\nconst model = MANA_LLM.FAST_TEXT;',
    "/* 'ollama/gemma3:12b' */ const x = 1;",
    // JSX text is prose.
    'const el = <p>Runs on ollama/gemma3:4b when local.</p>;',
    // Unusual nodes without model ids.
    'const t = tag`hello ${name}`;',
    "const xs = ['mana/fast-text', 'mana/long-form'] as const;",
    "const prices = { ollama: 0, 'ollama/': 1, [key]: 2 };",
    'const empty = ``;',
    // Options.
    {
      code: "const embed = 'ollama/nomic-embed-text';",
      options: [{ allow: ['^ollama/nomic-embed-'] }],
    },
    {
      code: "const model = 'vllm/qwen2.5:7b';",
      options: [{ extraPrefixes: [] }],
    },
    // A corpus file with only near-misses.
    ...Object.entries(manifest.files)
      .filter(([file, findings]) => /\.tsx?$/.test(file) && findings.length === 0)
      .map(([file]) => ({
        code: readFileSync(path.join(corpusDir, file), 'utf8'),
        filename: path.join(corpusDir, file),
        options: withConfig,
      })),
  ],
  invalid: [
    {
      code: "const model = 'groq/llama-3.1-8b-instant';",
      options: withConfig,
      errors: [
        {
          messageId: 'rawModelStringUseAlias',
          data: { value: 'groq/llama-3.1-8b-instant', key: 'FAST_TEXT', alias: 'mana/fast-text' },
          line: 1,
          column: 15,
          endColumn: 42,
          suggestions: [
            {
              messageId: 'replaceWithAlias',
              data: { key: 'FAST_TEXT' },
              output: `${IMPORT}const model = MANA_LLM.FAST_TEXT;`,
            },
          ],
        },
      ],
    },
    {
      // The existing import is reused, under its local name.
      code: "import { MANA_LLM as M } from '@mana/llm-aliases';\nconst model = \"ollama/gemma3:12b\";",
      options: withConfig,
      errors: [
        suggestsAlias(2, 15, "import { MANA_LLM as M } from '@mana/llm-aliases';\nconst model = M.LONG_FORM;"),
      ],
    },
    {
      // MANA_LLM joins an existing named import; a new import goes after the last one.
      code: "import { isManaAlias } from '@mana/llm-aliases';\nconst m = 'ollama/llava:7b';",
      options: withConfig,
      errors: [
        suggestsAlias(2, 11, "import { isManaAlias, MANA_LLM } from '@mana/llm-aliases';\nconst m = MANA_LLM.VISION;"),
      ],
    },
    {
      code: "import OpenAI from 'openai';\nconst m = 'google/gemini-2.0-flash';",
      options: withConfig,
      errors: [
        suggestsAlias(2, 11, `import OpenAI from 'openai';\n${IMPORT}const m = MANA_LLM.VISION;`),
      ],
    },
    {
      // A model in no alias's chain: reported without a suggestion.
      code: "const m = 'together/meta-llama/Llama-3-8b-chat-hf';",
      options: withConfig,
      errors: [{ messageId: 'rawModelString', data: { value: 'together/meta-llama/Llama-3-8b-chat-hf' }, line: 1, column: 11 }],
    },
    {
      // No alias config anywhere: still reported, no suggestion.
      code: "const m = 'groq/llama-3.1-8b-instant';",
      options: [{ aliasConfig: path.join(corpusDir, 'fixtures', 'missing.yaml') }],
      errors: [{ messageId: 'rawModelString', line: 1, column: 11 }],
    },
    {
      code: 'const m = `ollama/${name}`;',
      options: withConfig,
      errors: [{ messageId: 'rawModelString', data: { value: 'ollama/${…}' }, line: 1, column: 11 }],
    },
    {
      code: 'const m = `groq/llama-3.3-70b-versatile`;',
      options: withConfig,
      errors: [
        suggestsAlias(1, 11, `${IMPORT}const m = MANA_LLM.LONG_FORM;`),
      ],
    },
    {
      // JSX attribute strings become expression containers.
      code: 'const el = <Chat model="ollama/gemma3:12b" />;',
      options: withConfig,
      errors: [
        suggestsAlias(1, 24, `${IMPORT}const el = <Chat model={MANA_LLM.LONG_FORM} />;`),
      ],
    },
    {
      // Object keys become computed keys; type positions use typeof.
      code: "const prices = { 'groq/llama-3.3-70b-versatile': 0.59 };\ntype Pinned = 'ollama/gemma3:4b';",
      options: withConfig,
      errors: [
        suggestsAlias(1, 18, `${IMPORT}const prices = { [MANA_LLM.LONG_FORM]: 0.59 };\ntype Pinned = 'ollama/gemma3:4b';`),
        suggestsAlias(2, 15, `${IMPORT}const prices = { 'groq/llama-3.3-70b-versatile': 0.59 };\ntype Pinned = typeof MANA_LLM.FAST_TEXT;`),
      ],
    },
    {
      // Tagged templates and enum members are reported, with no rewrite offered.
      code: "const t = tag`groq/llama-3.1-8b-instant`;\nenum E { A = 'ollama/gemma3:4b' }",
      options: withConfig,
      errors: [
        { messageId: 'rawModelStringUseAlias', line: 1, column: 14, suggestions: [] },
        { messageId: 'rawModelStringUseAlias', line: 2, column: 14, suggestions: [] },
      ],
    },
    {
      // A CommonJS script gets the report but no rewrite (it cannot take an ES import).
      code: "const m = 'ollama/gemma3:4b';",
      options: withConfig,
      languageOptions: { parserOptions: { sourceType: 'script' } },
      errors: [{ messageId: 'rawModelStringUseAlias', line: 1, column: 11, suggestions: [] }],
    },
    {
      code: "const chain = ['ollama/gemma3:4b', 'mana/fast-text'] as const;",
      options: withConfig,
      errors: [
        suggestsAlias(1, 16, `${IMPORT}const chain = [MANA_LLM.FAST_TEXT, 'mana/fast-text'] as const;`),
      ],
    },
    {
      // extraPrefixes extends the built-in list; allow does not hide other models.
      code: "const a = 'vllm/qwen2.5:7b';\nconst b = 'ollama/gemma3:12b';",
      options: [{ extraPrefixes: ['vllm'], allow: ['^ollama/nomic-'], aliasConfig }],
      errors: [
        { messageId: 'rawModelString', data: { value: 'vllm/qwen2.5:7b' }, line: 1, column: 11 },
        suggestsAlias(2, 11, `${IMPORT}const a = 'vllm/qwen2.5:7b';\nconst b = MANA_LLM.LONG_FORM;`),
      ],
    },
    // The shared corpus: the validation script's tests read the same manifest.
    ...Object.entries(manifest.files)
      .filter(([file, findings]) => /\.tsx?$/.test(file) && findings.length > 0)
      .map(
        ([file, findings]): InvalidTestCase<MessageIds, Options> => ({
          code: readFileSync(path.join(corpusDir, file), 'utf8'),
          filename: path.join(corpusDir, file),
          options: withConfig,
          errors: findings.map(({ line, column, value, use, fix }) =>
            use === null
              ? { messageId: 'rawModelString', data: { value }, line, column }
              : {
                  messageId: 'rawModelStringUseAlias',
                  data: { value, key: use, alias: MANA_LLM[use] },
                  line,
                  column,
                  suggestions:
                    fix === null || fix === undefined
                      ? []
                      : [
                          {
                            messageId: 'replaceWithAlias',
                            output: withSuggestion(readFileSync(path.join(corpusDir, file), 'utf8'), line, column, fix),
                          },
                        ],
                },
          ),
        }),
      ),
  ],
});
