/**
 * Tests for scripts/validate-llm-strings.mjs (the repository-wide twin of the
 * rule): spawned with node on temporary trees. The corpus case reads the same
 * manifest as the RuleTester tests, so the script and the rule agree.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const script = path.join(repoRoot, 'scripts', 'validate-llm-strings.mjs');
const corpusDir = fileURLToPath(new URL('../test-corpus/', import.meta.url));
const manifest = JSON.parse(readFileSync(path.join(corpusDir, 'manifest.json'), 'utf8')) as {
  aliasConfig: string;
  files: Record<string, { line: number; column: number; value: string; use: string | null }[]>;
};

const trees: string[] = [];
afterEach(() => {
  for (const tree of trees.splice(0)) rmSync(tree, { recursive: true, force: true });
});

/** A temporary tree from `{ 'relative/path': 'content' }`. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'validate-llm-strings-'));
  trees.push(dir);
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  }
  return dir;
}

function run(cwd: string, ...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [script, ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const ALIASES = readFileSync(path.join(corpusDir, manifest.aliasConfig), 'utf8');

// Each case spawns the script as its own node process (some spawn several): on a
// loaded 2-core CI machine that takes seconds, so vitest's 5 s default is too tight.
describe('validate-llm-strings', { timeout: 30_000 }, () => {
  it('reports exactly the corpus findings, with suggestions from the alias config, and exits 1', () => {
    const dir = tree({ 'apps/llm-gateway/aliases.yaml': ALIASES });
    cpSync(corpusDir, path.join(dir, 'apps', 'corpus'), {
      recursive: true,
      filter: (source) => !source.includes(`${path.sep}fixtures`) && !source.endsWith('manifest.json'),
    });

    const { code, stdout } = run(dir);

    const expected = Object.entries(manifest.files).flatMap(([file, findings]) =>
      findings.map(
        ({ line, column, value, use }) =>
          `apps/corpus/${file}:${line}:${column}  '${value}'  → ${use === null ? 'use a MANA_LLM alias' : `use MANA_LLM.${use}`}`,
      ),
    );
    const lines = stdout.trim().split('\n');
    expect(lines.slice(0, -1).sort()).toEqual(expected.sort());
    const files = Object.values(manifest.files).filter((findings) => findings.length > 0).length;
    expect(lines.at(-1)).toMatch(new RegExp(`^validate-llm-strings: ${expected.length} raw provider model strings in ${files} files `));
    expect(code).toBe(1);
  });

  it('exits 0 on a clean tree and says how many files it scanned', () => {
    const dir = tree({
      'apps/web/src/chat.ts': "import { MANA_LLM } from '@mana/llm-aliases';\nexport const model = MANA_LLM.LONG_FORM;\n",
      'apps/web/src/links.ts': "export const repo = 'https://github.com/ollama/ollama'; // groq/llama-3.1-8b-instant\n",
      'services/py/app.py': 'MODEL = "mana/fast-text"  # was "ollama/gemma3:4b"\n',
    });
    const { code, stdout } = run(dir);
    expect(stdout).toMatch(/^validate-llm-strings: no raw provider model strings in 3 files \(\d+ ms\)\n$/);
    expect(code).toBe(0);
  });

  it('skips dependencies, build output and the allow-list', () => {
    const raw = "export const m = 'groq/llama-3.1-8b-instant';\n";
    const dir = tree({
      'apps/llm-gateway/aliases.yaml': ALIASES,
      'apps/llm-gateway/config/providers.yml': 'default: ollama/gemma3:4b\n',
      'apps/llm-gateway/src/router.test.ts': raw,
      'apps/llm-gateway/test/fixtures/chat.json': '{"model": "ollama/gemma3:4b"}\n',
      'apps/web/node_modules/sdk/index.js': raw,
      'apps/web/dist/index.js': raw,
      'packages/llm-router/src/config.ts': raw,
      'packages/llm-testkit/src/fake.ts': raw,
      'apps/web/src/ok.ts': 'export const ok = 1;\n',
    });
    const { code, stdout } = run(dir);
    expect(stdout).toMatch(/no raw provider model strings in 1 files/);
    expect(code).toBe(0);
  });

  it('scans only the given roots, and applies --prefix and --allow', () => {
    const dir = tree({
      'apps/web/src/a.ts': "export const a = 'vllm/qwen2.5:7b';\nexport const b = 'ollama/nomic-embed-text';\n",
      'services/api/b.ts': "export const c = 'groq/llama-3.1-8b-instant';\n",
    });
    const { code, stdout } = run(dir, '--root', 'apps', '--prefix', 'vllm', '--allow', '^ollama/nomic-embed-');
    expect(stdout.split('\n')[0]).toBe("apps/web/src/a.ts:1:18  'vllm/qwen2.5:7b'  → use a MANA_LLM alias");
    expect(stdout).toMatch(/1 raw provider model string in 1 file /);
    expect(code).toBe(1);
  });

  it('exits 2 naming a missing root', () => {
    const dir = tree({ 'apps/a.ts': 'export {};\n' });
    const { code, stderr, stdout } = run(dir, '--root', 'apps', '--root', 'no-such-dir');
    expect(stderr).toContain('root directory not found: no-such-dir');
    expect(stdout).toBe('');
    expect(code).toBe(2);
  });

  it('exits 2 naming an alias config it cannot read or parse', () => {
    const dir = tree({ 'apps/a.ts': 'export {};\n', 'broken.yaml': 'aliases: [unclosed\n', 'list.yaml': '- a\n' });
    mkdirSync(path.join(dir, 'a-directory.yaml'));

    const missing = run(dir, '--config', 'nowhere.yaml');
    expect(missing.stderr).toMatch(/cannot read the alias config .*nowhere\.yaml/);
    expect(missing.code).toBe(2);

    const directory = run(dir, '--config', 'a-directory.yaml');
    expect(directory.stderr).toMatch(/cannot read the alias config .*a-directory\.yaml: not a regular file/);
    expect(directory.code).toBe(2);

    const broken = run(dir, '--config', 'broken.yaml');
    expect(broken.stderr).toMatch(/alias config .*broken\.yaml is not valid YAML/);
    expect(broken.code).toBe(2);

    const list = run(dir, '--config', 'list.yaml');
    expect(list.stderr).toMatch(/list\.yaml is unusable: the alias config has no "aliases" map/);
    expect(list.code).toBe(2);
  });

  it('exits 2 on an unknown argument', () => {
    const dir = tree({ 'apps/a.ts': 'export {};\n' });
    const { code, stderr } = run(dir, '--rot', 'apps');
    expect(stderr).toContain('unknown argument: --rot');
    expect(code).toBe(2);
  });
});
