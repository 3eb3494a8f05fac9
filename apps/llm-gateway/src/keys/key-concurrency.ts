/**
 * In-flight requests per service key on this replica, for `max_concurrency`.
 * A request that gets a slot holds a lease, released exactly once, whatever
 * ends the request (answer, stream end, client gone, throw): the counter
 * cannot leak by construction. Counts live only while a key has requests in
 * flight, so the map is bounded by the requests in flight.
 */
export interface KeyLease {
  release(): void;
}

export class KeyConcurrency {
  private readonly inFlight = new Map<string, number>();

  /** A slot for key `id` if it has fewer than `max` requests in flight, else undefined. */
  acquire(id: string, max: number): KeyLease | undefined {
    const count = this.inFlight.get(id) ?? 0;
    if (count >= max) return undefined;
    this.inFlight.set(id, count + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const left = (this.inFlight.get(id) ?? 1) - 1;
        if (left <= 0) this.inFlight.delete(id);
        else this.inFlight.set(id, left);
      },
    };
  }

  /** Requests of key `id` in flight now. */
  count(id: string): number {
    return this.inFlight.get(id) ?? 0;
  }
}
