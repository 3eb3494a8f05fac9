/**
 * The usage store's SQLite connections never wait for a lock (busy_timeout 0:
 * a wait would block the event loop), so a write that meets another
 * connection's write — a batch or retention on the writer thread — fails at
 * once. Writes that are not retried elsewhere (a config version for the
 * history, service key writes, the planner statistics reload after a
 * retention run) go through here.
 */

/** Pauses before each new try; about 4 s in all, longer than any batch or retention statement holds the lock. */
const LOCKED_RETRY_DELAYS_MS = [50, 200, 500, 1_000, 2_000] as const;

export async function retryWhileLocked<T>(write: () => Promise<T>): Promise<T> {
  for (const delayMs of LOCKED_RETRY_DELAYS_MS) {
    try {
      return await write();
    } catch (error) {
      if (!isLocked(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
  return write();
}

/** SQLITE_BUSY and its extended codes (SQLITE_BUSY_SNAPSHOT in WAL mode). */
function isLocked(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
