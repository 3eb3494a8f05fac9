import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStaticFolder, lookupStatic, MAX_STATIC_FILES, type StaticFolder } from './static-folder.js';

let root: string;
let dist: string;
let folder: StaticFolder;
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(2000))});\n`;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'mana-static-'));
  dist = join(root, 'dist');
  await mkdir(join(dist, 'assets'), { recursive: true });
  await writeFile(join(root, 'secret.txt'), 'outside the folder');
  await writeFile(join(dist, 'index.html'), '<!doctype html><title>x</title>');
  await writeFile(join(dist, 'assets', 'index-abc123.js'), SCRIPT);
  await writeFile(join(dist, 'assets', 'index-abc123.css'), 'body{}');
  await writeFile(join(dist, 'assets', 'index-abc123.js.map'), '{}');
  // Links inside the folder that point out of it (a file and a folder): never served.
  await symlink(join(root, 'secret.txt'), join(dist, 'linked.txt'));
  await symlink(root, join(dist, 'up'));
  await symlink('/etc/passwd', join(dist, 'assets', 'passwd.txt'));
  folder = await loadStaticFolder(dist);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('loadStaticFolder', () => {
  it('holds the regular files with their content types, and nothing reached through a link', () => {
    expect([...folder.files.keys()].sort()).toEqual(['assets/index-abc123.css', 'assets/index-abc123.js', 'index.html']);
    expect(folder.files.get('index.html')!.contentType).toBe('text/html; charset=utf-8');
    expect(folder.files.get('assets/index-abc123.js')!.contentType).toBe('text/javascript; charset=utf-8');
    expect(folder.files.get('assets/index-abc123.css')!.contentType).toBe('text/css; charset=utf-8');
  });

  it('keeps a gzipped copy of a text file worth compressing, equal to the original once unzipped', () => {
    const js = folder.files.get('assets/index-abc123.js')!;
    expect(js.gzip!.length).toBeLessThan(js.body.length / 10);
    expect(gunzipSync(js.gzip!).toString()).toBe(SCRIPT);
    expect(folder.files.get('assets/index-abc123.css')!.gzip).toBeUndefined(); // 6 bytes: not worth it
  });

  it('refuses a missing folder, a file, and a folder over the file bound', async () => {
    await expect(loadStaticFolder(join(root, 'nope'))).rejects.toThrow(/ENOENT/);
    await expect(loadStaticFolder(join(root, 'secret.txt'))).rejects.toThrow(/not a folder/);
    const many = join(root, 'many');
    await mkdir(many);
    await Promise.all(Array.from({ length: MAX_STATIC_FILES + 1 }, (_, i) => writeFile(join(many, `f${i}.txt`), 'x')));
    await expect(loadStaticFolder(many)).rejects.toThrow(`more than ${MAX_STATIC_FILES} files`);
  });
});

describe('lookupStatic', () => {
  it('finds index.html for the folder itself and a file by its plain path', () => {
    expect(lookupStatic(folder, '')?.path).toBe('index.html');
    expect(lookupStatic(folder, 'assets/index-abc123.js')?.file.contentType).toMatch(/javascript/);
  });

  it.each([
    '../secret.txt',
    'assets/../index.html',
    './index.html',
    '%2e%2e/secret.txt',
    '..%2fsecret.txt',
    '..%5csecret.txt',
    '..\\secret.txt',
    'assets\\index-abc123.js',
    '/etc/passwd',
    '//etc/passwd',
    'assets//index-abc123.js',
    'linked.txt',
    'up/secret.txt',
    'assets/passwd.txt',
    'assets/index-abc123.js.map',
    'index.html%00',
    'C:/Windows/win.ini',
    'x'.repeat(600),
  ])('answers nothing for %s', (path) => {
    expect(lookupStatic(folder, path)).toBeUndefined();
  });
});
