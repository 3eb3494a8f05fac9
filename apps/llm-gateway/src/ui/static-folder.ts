/**
 * The dashboard's built files (`apps/dashboard/dist`), read once into memory
 * at start. A request is answered by looking its path up in this map and
 * nowhere else: no request path ever reaches the file system, so `..`,
 * encoded dots, backslashes or absolute paths cannot name a file outside the
 * folder. Symbolic links and anything but regular files are skipped while
 * reading, so a link inside the folder cannot reach out of it either.
 *
 * Bounded: at most 500 files and 16 MB in total (the build is ~0.2 MB);
 * a folder over either bound is refused with a message, never half served.
 */
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

export const MAX_STATIC_FILES = 500;
export const MAX_STATIC_BYTES = 16 * 1024 * 1024; // 16 MB
/** Smaller bodies are not worth compressing (the gzip header alone is 20 bytes). */
const MIN_GZIP_BYTES = 512;

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.json', '.svg', '.txt']);

/** The path segments a served file may have: letters, digits, `.`, `_`, `-` (no segment of only dots). */
const SAFE_PATH = /^(?!\.{1,2}(?:\/|$))[A-Za-z0-9_-][A-Za-z0-9._-]*(?:\/(?!\.{1,2}(?:\/|$))[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;

export interface StaticFile {
  readonly body: Buffer;
  /** The body gzipped, when that is smaller and the type is text. */
  readonly gzip: Buffer | undefined;
  readonly contentType: string;
  /** A strong validator: a hash of the bytes. */
  readonly etag: string;
}

export interface StaticFolder {
  readonly dir: string;
  /** `relative/path` → file. */
  readonly files: ReadonlyMap<string, StaticFile>;
}

function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot === -1 ? '' : name.slice(dot).toLowerCase();
}

/** Reads `dir` (recursively) into memory; throws when it is missing, not a folder, or over a bound. */
export async function loadStaticFolder(dir: string): Promise<StaticFolder> {
  const files = new Map<string, StaticFile>();
  let total = 0;
  const walk = async (folder: string, prefix: string): Promise<void> => {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      const full = join(folder, entry.name);
      // lstat: a symbolic link is itself, never what it points to (it is skipped below).
      const info = await lstat(full);
      if (info.isDirectory()) {
        await walk(full, relative);
        continue;
      }
      if (!info.isFile() || !SAFE_PATH.test(relative)) continue;
      const type = CONTENT_TYPES[extensionOf(entry.name)];
      if (type === undefined) continue; // source maps and other build by-products are not served
      if (files.size + 1 > MAX_STATIC_FILES) throw new Error(`${dir} holds more than ${MAX_STATIC_FILES} files`);
      total += info.size;
      if (total > MAX_STATIC_BYTES) throw new Error(`${dir} holds more than ${MAX_STATIC_BYTES / 1024 / 1024} MB`);
      const body = await readFile(full);
      const zipped = COMPRESSIBLE.has(extensionOf(entry.name)) && body.length >= MIN_GZIP_BYTES ? gzipSync(body, { level: 9 }) : undefined;
      files.set(relative, {
        body,
        gzip: zipped !== undefined && zipped.length < body.length ? zipped : undefined,
        contentType: type,
        etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 20)}"`,
      });
    }
  };
  const info = await lstat(dir);
  if (!info.isDirectory()) throw new Error(`${dir} is not a folder`);
  await walk(dir, '');
  return { dir, files };
}

/**
 * The file a raw request path (still percent-encoded, as received) names, or
 * undefined. Only plain names are looked up: any `%`, backslash, empty or dot
 * segment is not a name the build produces, so it is a 404 without decoding.
 */
export function lookupStatic(folder: StaticFolder, rawPath: string): { readonly path: string; readonly file: StaticFile } | undefined {
  const path = rawPath === '' ? 'index.html' : rawPath;
  if (path.length > 512 || !SAFE_PATH.test(path)) return undefined;
  const file = folder.files.get(path);
  return file === undefined ? undefined : { path, file };
}
