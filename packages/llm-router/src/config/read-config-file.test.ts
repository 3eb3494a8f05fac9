import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from './load-config.js';
import { readConfigFile } from './read-config-file.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'router-read-config-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readConfigFile', () => {
  it('reads a regular file', async () => {
    await writeFile(join(dir, 'a.yaml'), 'aliases: {}\n');
    expect(await readConfigFile(join(dir, 'a.yaml'))).toBe('aliases: {}\n');
  });

  it('refuses a FIFO at once instead of waiting for a writer', async () => {
    const fifo = join(dir, 'fifo.yaml');
    execFileSync('mkfifo', [fifo]);
    const started = performance.now();
    await expect(readConfigFile(fifo)).rejects.toThrow('not a regular file (a FIFO)');
    expect(performance.now() - started).toBeLessThan(1_000);
    await expect(loadConfigFile(fifo)).rejects.toMatchObject({
      code: 'invalid_config',
      message: `invalid config at ${fifo}: cannot read the file (not a regular file (a FIFO))`,
    });
  });

  it('refuses a directory and a device that never ends', async () => {
    await expect(readConfigFile(dir)).rejects.toThrow('not a regular file (a directory)');
    await expect(readConfigFile('/dev/zero')).rejects.toThrow('not a regular file (a device)');
  });

  it('refuses a file over the size bound', async () => {
    await writeFile(join(dir, 'big.yaml'), 'x'.repeat(2_001));
    await expect(readConfigFile(join(dir, 'big.yaml'), 2_000)).rejects.toThrow('larger than 2000 bytes');
    expect(await readConfigFile(join(dir, 'big.yaml'), 2_001)).toHaveLength(2_001);
  });
});
