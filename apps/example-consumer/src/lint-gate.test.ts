/**
 * The lint gate, end to end on this app: plant `const m = '<provider model>'` in
 * a temporary file under src/, and both ESLint (the repository config, as
 * `pnpm lint` runs it) and the validation script (as `pnpm validate:all` runs it)
 * fail naming the file, line and column; remove it and both pass again.
 * The planted file lives for a few seconds and is removed in `finally`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const appDir = path.join(repoRoot, 'apps', 'example-consumer');
const eslintBin = path.join(repoRoot, 'node_modules', 'eslint', 'bin', 'eslint.js');
const validator = path.join(repoRoot, 'scripts', 'validate-llm-strings.mjs');

// Spelled in parts so this test file itself stays clean for both tools.
const RAW = ['groq', 'llama-3.1-8b-instant'].join('/');
const planted = path.join(appDir, 'src', `planted-raw-model-${process.pid}.ts`);
const plantedRelative = path.relative(repoRoot, planted).split(path.sep).join('/');

function run(args: string[]): { code: number | null; output: string } {
  const result = spawnSync(process.execPath, args, { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

const eslint = (target: string) => run([eslintBin, '--max-warnings=0', '--no-warn-ignored', target]);
const validate = () => run([validator, '--root', 'apps/example-consumer']);

beforeAll(() => {
  // ESLint loads the plugin from its build; turbo builds it before this app's tests
  // (a devDependency), and `pnpm lint` does too. Say so plainly when it is missing.
  const dist = path.join(repoRoot, 'packages', 'eslint-plugin-llm', 'dist', 'index.js');
  if (!existsSync(dist)) throw new Error(`${dist} is missing: run \`pnpm build\` (or \`pnpm lint\`) first`);
});

afterAll(() => rmSync(planted, { force: true }));

describe('lint gate on apps/example-consumer', () => {
  it('fails on a planted raw provider model string and passes once it is removed', () => {
    try {
      writeFileSync(planted, `// planted by lint-gate.test.ts\nconst m = '${RAW}';\n`);

      const linted = eslint(planted);
      expect(linted.code).toBe(1);
      expect(linted.output).toContain(planted);
      expect(linted.output).toMatch(
        new RegExp(`\\n\\s+2:11\\s+error\\s+Raw provider model string '${RAW}': use MANA_LLM\\.FAST_TEXT .*@mana/llm/no-raw-model-string`),
      );

      const validated = validate();
      expect(validated.code).toBe(1);
      expect(validated.output).toContain(`${plantedRelative}:2:11  '${RAW}'  → use MANA_LLM.FAST_TEXT`);
    } finally {
      rmSync(planted, { force: true });
    }

    const lintedClean = eslint('apps/example-consumer');
    expect(lintedClean.output).toBe('');
    expect(lintedClean.code).toBe(0);

    const validatedClean = validate();
    expect(validatedClean.output).toMatch(/no raw provider model strings/);
    expect(validatedClean.code).toBe(0);
  }, 240_000);
});
