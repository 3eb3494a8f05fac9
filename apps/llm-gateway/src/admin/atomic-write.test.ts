import { spawnSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, readdir, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ReadOnlyError, STALE_TEMP_AGE_MS, assertWritable, removeStaleTempFiles, writeFileAtomic } from './atomic-write.js';

async function dirWith(text?: string, mode = 0o640): Promise<{ dir: string; path: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'atomic-write-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
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

  it('a writable file and a missing one pass, and the check itself changes nothing on disk', async () => {
    const { dir, path } = await dirWith('old\n', 0o644);
    await expect(assertWritable(path)).resolves.toBeUndefined();
    await expect(assertWritable(join(dir, 'new.yaml'))).resolves.toBeUndefined();
    // Only a check: the file keeps its content and mode, no probe or temporary file is left, the missing one is not created.
    expect(await readFile(path, 'utf8')).toBe('old\n');
    expect((await stat(path)).mode & 0o777).toBe(0o644);
    expect(await readdir(dir)).toEqual(['aliases.yaml']);
  });
});

describe('removeStaleTempFiles', () => {
  it('deletes what a writer killed mid-write left a minute ago, whatever its pid, and nothing else', async () => {
    const { dir, path } = await dirWith('kept\n');
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid; // exited by now
    const old = (Date.now() - 2 * STALE_TEMP_AGE_MS) / 1000;
    const files = {
      stale: `.aliases.yaml.${deadPid}.0a1b2c3d.tmp`,
      // a container restarted with the same pid as the run that was killed
      staleSamePid: `.aliases.yaml.${process.pid}.8c9d0e1f.tmp`,
      recent: `.aliases.yaml.${deadPid}.4e5f6a7b.tmp`, // may be a write in progress elsewhere
      otherFile: `.other.yaml.${deadPid}.0a1b2c3d.tmp`,
      lookalike: `.aliases.yaml.123.yaml.${deadPid}.0a1b2c3d.tmp`, // a temp of "aliases.yaml.123.yaml"
      unrelated: 'notes.tmp',
    };
    for (const [kind, name] of Object.entries(files)) {
      await writeFile(join(dir, name), 'api_key: sk-half-written');
      if (kind !== 'recent') await utimes(join(dir, name), old, old);
    }
    const link = `.aliases.yaml.${deadPid}.deadbeef.tmp`;
    await symlink(join(dir, files.unrelated), join(dir, link));
    expect((await removeStaleTempFiles(path)).sort()).toEqual([files.stale, files.staleSamePid].sort());
    expect((await readdir(dir)).sort()).toEqual(['aliases.yaml', files.recent, files.otherFile, files.lookalike, files.unrelated, link].sort());
    expect(await readFile(path, 'utf8')).toBe('kept\n');
  });

  it('a missing folder is no error', async () => {
    expect(await removeStaleTempFiles('/nonexistent-folder-for-this-test/aliases.yaml')).toEqual([]);
  });
});
