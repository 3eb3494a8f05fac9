/**
 * What `pnpm build` puts in `dist` (what the package ships): no test file and no
 * test-only helper. Helpers shared by tests are named `test-*.ts`, which
 * tsconfig.build.json excludes; this pins that no such file slips back in.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

describe('build contents', () => {
  it('ships no test file, no test-* helper and nothing that imports vitest or the testkit', () => {
    const listed = execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--listFilesOnly'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .map((line) => line.trim())
      .filter((file) => file.startsWith(join(root, 'src')));
    expect(listed.length).toBeGreaterThan(10);
    const testOnly = listed.filter((file) => {
      const name = basename(file);
      if (name.endsWith('.test.ts') || name.startsWith('test-')) return true;
      const text = readFileSync(file, 'utf8');
      return /from '(vitest|@mana\/llm-testkit)'/.test(text);
    });
    expect(testOnly.map((file) => file.slice(root.length + 1))).toEqual([]);
  }, 30_000);
});
