/**
 * Replaces a file so that a reader (or a crash, even `kill -9`) sees either the
 * old content or the new one, never a torn mix: the new text goes to a
 * temporary file in the same folder (rename is only atomic within one file
 * system), is flushed to disk, then renamed over the original. The original's
 * permission bits are kept.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, chmod, lstat, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export class ReadOnlyError extends Error {
  override readonly name = 'ReadOnlyError';
}

const READ_ONLY_CODES = new Set(['EACCES', 'EPERM', 'EROFS']);
const TEMP_SUFFIX = '.tmp';
/** A write takes milliseconds: a temporary file this old was left by a process that died mid-write. */
export const STALE_TEMP_AGE_MS = 60_000;

/**
 * Throws ReadOnlyError when `path` may not be replaced: the file or its folder
 * is not writable for this process, or the file has no write bit at all. The
 * last rule matters because a rename never needs the file's own write
 * permission (and root passes every access check): `chmod a-w` is how an
 * operator says "do not change this file", and it is honoured.
 */
export async function assertWritable(path: string): Promise<void> {
  try {
    const { mode } = await stat(path);
    if ((mode & 0o222) === 0) throw new ReadOnlyError(`${path} is read-only (mode ${(mode & 0o777).toString(8)})`);
    await access(path, constants.W_OK);
    await access(dirname(path), constants.W_OK);
  } catch (error) {
    if (error instanceof ReadOnlyError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return; // a new file: the write itself will tell
    if (code !== undefined && READ_ONLY_CODES.has(code)) throw new ReadOnlyError(`${path} is not writable (${code})`);
    throw error;
  }
}

export interface AtomicWriteOptions {
  /** Mode of a file that does not exist yet (default 0o644); an existing file keeps its own. */
  readonly newFileMode?: number;
  /** Mode the file gets whatever it had (the secrets file is always 0o600). */
  readonly mode?: number;
  /** Called between writing the temporary file and renaming it (tests use it to crash mid-write). */
  readonly beforeRename?: () => Promise<void>;
}

export async function writeFileAtomic(path: string, text: string, options: AtomicWriteOptions = {}): Promise<void> {
  let mode = options.mode ?? options.newFileMode ?? 0o644;
  if (options.mode === undefined) {
    try {
      mode = (await stat(path)).mode & 0o7777;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}${TEMP_SUFFIX}`);
  let renamed = false;
  try {
    // 'wx': never follow or reuse an existing file; the mode is set before any byte is written.
    const handle = await open(temp, 'wx', mode & 0o777);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await chmod(temp, mode); // open()'s mode is reduced by the umask
    await options.beforeRename?.();
    await rename(temp, path);
    renamed = true;
    await syncFolder(dirname(path));
  } catch (error) {
    if (!renamed) await unlink(temp).catch(() => undefined);
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== undefined && READ_ONLY_CODES.has(code)) throw new ReadOnlyError(`${path} is not writable (${code})`);
    throw error;
  }
}

/** Makes the rename itself durable; some file systems refuse fsync on a folder, which is fine. */
async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r').catch(() => undefined);
  if (handle === undefined) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}

/**
 * Deletes the temporary files `writeFileAtomic` left next to `path` when a
 * process was killed between creating one and renaming it (`kill -9`, power
 * loss, a container stopped mid-write). They can hold a whole config, or the
 * secrets file's API keys. A write takes milliseconds, so a temporary file a
 * minute old is abandoned, whoever made it: the age is the test, not the pid
 * in its name (in a container every start may have the same pid, and another
 * host sharing the folder has pids of its own). Only regular files named
 * exactly as `writeFileAtomic` names them are touched, never a link.
 * Returns the names deleted; never throws (a folder it cannot read is skipped).
 */
export async function removeStaleTempFiles(path: string, now = Date.now()): Promise<string[]> {
  const folder = dirname(path);
  const pattern = new RegExp(`^\\.${escapeRegExp(basename(path))}\\.\\d+\\.[0-9a-f]{8}${escapeRegExp(TEMP_SUFFIX)}$`);
  const names = await readdir(folder).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of names) {
    if (!pattern.test(name)) continue;
    const file = join(folder, name);
    const info = await lstat(file).catch(() => undefined);
    if (info === undefined || !info.isFile() || now - info.mtimeMs < STALE_TEMP_AGE_MS) continue;
    if (await unlink(file).then(() => true, () => false)) removed.push(name);
  }
  return removed;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
