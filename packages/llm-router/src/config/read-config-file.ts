/**
 * Reads a config file without ever blocking: only a regular file, of bounded
 * size. A FIFO opened for reading (plain `readFile`) waits for a writer inside
 * a libuv thread forever — later reloads queue behind it and the process can
 * no longer exit — and a device such as /dev/zero never ends. `O_NONBLOCK`
 * makes the open of a FIFO return at once (it has no effect on regular files),
 * and `fstat` on the opened handle (not the path: no race with a rename)
 * decides before a single byte is read.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

/** An alias config is a few KB; anything this large is not one. */
export const MAX_CONFIG_BYTES = 1024 * 1024; // 1 MB

export class ConfigFileError extends Error {}

export async function readConfigFile(path: string, maxBytes = MAX_CONFIG_BYTES): Promise<string> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new ConfigFileError(`not a regular file (${kindOf(stat)})`);
    if (stat.size > maxBytes) throw new ConfigFileError(`larger than ${maxBytes} bytes`);
    // Read at most maxBytes + 1, so a file growing while read is still refused, never buffered whole.
    const buffer = Buffer.alloc(Math.min(stat.size, maxBytes) + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) throw new ConfigFileError(`larger than ${maxBytes} bytes`);
    return buffer.toString('utf8', 0, length);
  } finally {
    await handle.close();
  }
}

function kindOf(stat: import('node:fs').Stats): string {
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isDirectory()) return 'a directory';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  if (stat.isSocket()) return 'a socket';
  return 'not a file';
}
