import { chmod, mkdtemp, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReadOnlyError, assertWritable, writeFileAtomic } from './atomic-write.js';

async function dirWith(text?: string, mode = 0o640): Promise<{ dir: string; path: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'atomic-write-'));
  const path = join(dir, 'aliases.yaml');
  if (text !== undefined) {
    await writeFile(path, text);
    await chmod(path, mode);
  }
  return { dir, path };
}

describe('writeFileAtomic', () => {
  it('replaces the content, keeps the mode and leaves no temporary file', async () => {
    const { dir, path } = await dirWith('old\n', 0o640);
    await writeFileAtomic(path, 'new\n');
    expect(await readFile(path, 'utf8')).toBe('new\n');
    expect((await stat(path)).mode & 0o777).toBe(0o640);
    expect(await readdir(dir)).toEqual(['aliases.yaml']);
  });

  it('creates a missing file with the requested mode', async () => {
    const { path } = await dirWith();
    await writeFileAtomic(path, 'k=v\n', { newFileMode: 0o600 });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('a failure before the rename leaves the old file whole and cleans up', async () => {
    const { dir, path } = await dirWith('old\n');
    const write = writeFileAtomic(path, 'new\n', {
      beforeRename: async () => {
        throw new Error('crash');
      },
    });
    await expect(write).rejects.toThrow('crash');
    expect(await readFile(path, 'utf8')).toBe('old\n');
    expect(await readdir(dir)).toEqual(['aliases.yaml']);
  });
});

describe('assertWritable', () => {
  it('a file without write bits is read-only, even for root', async () => {
    const { path } = await dirWith('old\n', 0o444);
    await expect(assertWritable(path)).rejects.toBeInstanceOf(ReadOnlyError);
  });

  it('a writable file and a missing one pass', async () => {
    const { dir, path } = await dirWith('old\n', 0o644);
    await expect(assertWritable(path)).resolves.toBeUndefined();
    await expect(assertWritable(join(dir, 'new.yaml'))).resolves.toBeUndefined();
  });
});
