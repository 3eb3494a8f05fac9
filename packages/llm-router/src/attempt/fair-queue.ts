/**
 * A queue shared by callers that takes their items in turn (round robin), so
 * that one caller's backlog waits behind itself and not in front of others.
 * Each caller's items stay in arrival order; bounded per caller and overall.
 *
 * The turn order is a ring of the callers that have items: a caller whose item
 * is taken goes to the back if it still has more, and a caller that arrives
 * joins at the back. So an item at the head of its caller's queue is taken
 * after at most one item of each caller ahead of it in the ring, however many
 * items those callers hold.
 */
export interface FairQueueLimits {
  /** The most items one caller may have queued. */
  readonly perCaller: number;
  /** The most items queued over all callers. */
  readonly total: number;
}

/** Why an item was not queued: its caller's queue, or the whole queue, is at its bound. */
export type QueueFull = 'caller' | 'total';

export class FairQueue<T> {
  private readonly byCaller = new Map<string, T[]>();
  /** Callers with items, in turn order (front: next). */
  private readonly ring: string[] = [];
  private count = 0;

  constructor(private readonly limits: FairQueueLimits) {}

  /** Items queued over all callers. */
  get length(): number {
    return this.count;
  }

  /**
   * Queues `item` at the back of `caller`'s queue, or says which bound is full.
   * `force` queues it whatever the bounds (it still counts against them):
   * for work that must not be refused once its request was admitted.
   */
  push(caller: string, item: T, force = false): QueueFull | undefined {
    const items = this.byCaller.get(caller);
    if (!force) {
      if ((items?.length ?? 0) >= this.limits.perCaller) return 'caller';
      if (this.count >= this.limits.total) return 'total';
    }
    if (items === undefined) {
      this.byCaller.set(caller, [item]);
      this.ring.push(caller);
    } else {
      items.push(item);
    }
    this.count++;
    return undefined;
  }

  /**
   * The next item by turn among callers that `eligible` allows (a caller it
   * skips keeps its place in the ring), or undefined when none has one.
   */
  take(eligible: (caller: string) => boolean): { readonly caller: string; readonly item: T } | undefined {
    for (let i = 0; i < this.ring.length; i++) {
      const caller = this.ring[i]!;
      if (!eligible(caller)) continue;
      const items = this.byCaller.get(caller)!;
      const item = items.shift()!;
      this.count--;
      this.ring.splice(i, 1);
      if (items.length > 0) this.ring.push(caller);
      else this.byCaller.delete(caller);
      return { caller, item };
    }
    return undefined;
  }

  /** Takes `item` out of `caller`'s queue (e.g. its request went away); false when it was not queued. */
  remove(caller: string, item: T): boolean {
    const items = this.byCaller.get(caller);
    const at = items?.indexOf(item) ?? -1;
    if (items === undefined || at === -1) return false;
    items.splice(at, 1);
    this.count--;
    if (items.length === 0) {
      this.byCaller.delete(caller);
      this.ring.splice(this.ring.indexOf(caller), 1);
    }
    return true;
  }

  /** Empties the queue: every item, in turn order of their callers. */
  drain(): T[] {
    const all = this.ring.flatMap((caller) => this.byCaller.get(caller)!);
    this.byCaller.clear();
    this.ring.length = 0;
    this.count = 0;
    return all;
  }
}
