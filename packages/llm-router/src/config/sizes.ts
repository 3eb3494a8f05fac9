/**
 * Sizes in the config and on the command line are written for people
 * ("64kb", "32mb", "1gb") or as a plain number of bytes. Units are binary
 * multiples (1kb = 1024 bytes), case-insensitive.
 */

const SIZE_UNITS: Readonly<Record<string, number>> = { '': 1, b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

const SIZE = /^\s*(\d+(?:\.\d+)?)\s*([kmg]?b)?\s*$/i;

/** `20mb` → 20971520; `1024` → 1024; zero, negative or invalid → undefined. */
export function parseSize(text: string): number | undefined {
  const match = SIZE.exec(text);
  if (!match) return undefined;
  const unit = SIZE_UNITS[(match[2] ?? '').toLowerCase()];
  if (unit === undefined) return undefined;
  const bytes = Math.floor(Number(match[1]) * unit);
  return bytes > 0 && Number.isSafeInteger(bytes) ? bytes : undefined;
}
