/**
 * Runs tasks one at a time in arrival order. Config reloads (SIGHUP, POST
 * /admin/reload) and admin writes share one queue, so a write never reads a
 * file that a reload is halfway through, and two writes never interleave.
 */
export type SerialQueue = <T>(task: () => Promise<T>) => Promise<T>;

export function createSerialQueue(): SerialQueue {
  let tail: Promise<unknown> = Promise.resolve();
  return (task) => {
    const next = tail.then(task);
    tail = next.catch(() => undefined);
    return next;
  };
}
