/**
 * Which other replicas this one believes alive: the names its last heartbeat
 * read from the table, corrected by the joins and leaves notified since that
 * read began. A notification that arrives while a read is in flight may be
 * about a change the read does not see yet (or already sees); applying those
 * again on top of the read keeps the newest word about each replica.
 */
import type { ReplicaNotice } from './replica-rows.js';

export class Membership {
  private readonly others = new Set<string>();
  /** The newest notice per replica, with the sequence number it arrived at. */
  private readonly notices = new Map<string, { readonly event: ReplicaNotice['event']; readonly seq: number }>();
  private seq = 0;

  constructor(private readonly self: string) {}

  /** Replicas alive, this one included: at least 1. */
  get alive(): number {
    return 1 + this.others.size;
  }

  /** A join or leave notified by another replica; true when the count changed. */
  notice(notice: ReplicaNotice): boolean {
    if (notice.replica === this.self) return false;
    this.notices.set(notice.replica, { event: notice.event, seq: ++this.seq });
    return this.applyNotice(notice.replica, notice.event);
  }

  /** Marks the start of a read: what is notified from now on is applied over its result. */
  readStarted(): number {
    return ++this.seq;
  }

  /** The names a read started at `mark` returned; true when the count changed. */
  read(names: readonly string[], mark: number): boolean {
    const before = this.alive;
    this.others.clear();
    for (const name of names) if (name !== this.self) this.others.add(name);
    for (const [replica, { event, seq }] of this.notices) {
      if (seq > mark) this.applyNotice(replica, event);
      else this.notices.delete(replica); // the read saw the table after it
    }
    return this.alive !== before;
  }

  private applyNotice(replica: string, event: ReplicaNotice['event']): boolean {
    const had = this.others.has(replica);
    if (event === 'join') this.others.add(replica);
    else this.others.delete(replica);
    return had !== this.others.has(replica);
  }
}
