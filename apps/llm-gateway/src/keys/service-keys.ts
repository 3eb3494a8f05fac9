/**
 * The gateway's service keys: an in-memory KeyIndex, loaded from the key
 * store (the gateway's database, with or without usage recording) at start
 * and updated by every admin write on this replica, so no request ever waits
 * on the database. The store is the truth; the index is
 * what a request is checked against.
 *
 * In the background, on one timer:
 * - `last_used_at` is approximate: uses are collected in memory and written in
 *   one transaction every LAST_USED_FLUSH_MS (and at shutdown);
 * - a replica whose first read failed (store down at start) reads again until
 *   it succeeds; with PostgreSQL every replica also re-reads all keys: the
 *   repair of a notification it missed.
 *
 * With PostgreSQL each key write NOTIFYs its id (SERVICE_KEYS_CHANNEL, in the
 * write's transaction) and every replica LISTENs: it reads that one key again
 * at once, so a create, disable, rotation or delete on one replica holds on
 * the others within milliseconds. After a reconnect of the listener, all keys
 * are read again (what it missed while nobody listened).
 *
 * The static MANA_LLM_API_KEYS keys are not stored here; they are listed as
 * read-only `env-1`, `env-2`, … (numbered in the order the variable lists them).
 *
 * It is the key check's second source of callers (after StaticKeys, see
 * http/api-caller.ts): a presented token's SHA-256 is looked up in the index,
 * and its `epoch` grows with every change of the keys, so a connection
 * remembered as accepted is checked again after a disable, rotation or delete.
 */
import { KeyIndex, isKeyId, type ServiceKeyCaller, type StoredServiceKey } from '@mana/llm-service-keys';
import { NotifyListener } from '@mana/llm-shared-state';
import { SERVICE_KEYS_CHANNEL } from '@mana/llm-usage-store';
import type { CallerSource } from '../http/api-caller.js';
import { KeyConcurrency } from './key-concurrency.js';
import type { ServiceKeyStore, ServiceKeyWrite } from '@mana/llm-usage-store';
import type { Logger } from '../logging.js';
import { createSerialQueue, type SerialQueue } from '../serial-queue.js';
import { retryWhileLocked } from '../usage/retry-while-locked.js';

/** How often the collected uses are written, and the keys re-read where needed. */
export const LAST_USED_FLUSH_MS = 10_000; // 10 s

/** Keys named in notifications and not yet read again; beyond this, all keys are read at once instead (a bound, whoever notifies). */
const MAX_PENDING_REFRESHES = 100;

/** The id and name of the n-th (1-based) MANA_LLM_API_KEYS key. */
export const staticKeyId = (n: number): string => `env-${n}`;
export const STATIC_KEY_ID = /^env-([1-9][0-9]{0,5})$/;

export interface ServiceKeysOptions {
  /** Where keys are stored; closed with this object (it is its only user). */
  readonly store: ServiceKeyStore;
  /** How many keys MANA_LLM_API_KEYS holds. */
  readonly staticKeyCount: number;
  readonly logger: Logger;
  /** Re-read the store on every tick (PostgreSQL: other replicas write it too). */
  readonly reconcile: boolean;
  /** PostgreSQL URL to LISTEN on for other replicas' key writes (a secret: never logged). */
  readonly listenUrl?: string;
  readonly now?: () => number;
}

export class ServiceKeys implements CallerSource<ServiceKeyCaller> {
  /** Change it only through `changeIndex` (the epoch follows it). */
  private readonly index = new KeyIndex();
  private changes = 0;
  /** When a key's answer next changes by itself (an expiry or a grace end), epoch ms. */
  private nextChangeAt = Infinity;
  readonly staticKeyCount: number;
  /** Requests in flight per key on this replica (max_concurrency). */
  readonly inFlight = new KeyConcurrency();
  /** Uses not yet written: key id → epoch ms of the newest. */
  private readonly pendingUses = new Map<string, number>();
  /** Admin writes and re-reads of this replica, one at a time, so the index never goes back to an older state. */
  private readonly serial: SerialQueue = createSerialQueue();
  private readonly timer: NodeJS.Timeout;
  private loaded = false;
  private closed = false;
  private readonly listener: NotifyListener | undefined;
  /** Ids of keys another replica wrote, to read again. */
  private readonly refreshes = new Set<string>();
  private refreshing = false;
  private listenerLost = false;
  private readonly now: () => number;

  constructor(private readonly options: ServiceKeysOptions) {
    this.staticKeyCount = options.staticKeyCount;
    this.now = options.now ?? Date.now;
    this.timer = setInterval(() => void this.tick(), LAST_USED_FLUSH_MS);
    this.timer.unref();
    this.listener =
      options.listenUrl === undefined
        ? undefined
        : new NotifyListener({
            url: options.listenUrl,
            channels: [SERVICE_KEYS_CHANNEL],
            onNotification: (_channel, id) => this.refresh(id),
            onConnected: () => {
              if (this.listenerLost) options.logger.info({}, 'service key notifications received again');
              this.listenerLost = false;
              // What was written while nobody listened.
              if (this.loaded) void this.reload('reconcile');
            },
            onLost: (error) => {
              if (!this.listenerLost) options.logger.warn({ err: { message: error.message } }, 'service key notifications lost; reconnecting (keys are read again every 10 s meanwhile)');
              this.listenerLost = true;
            },
          });
  }

  /** The store keys live in. */
  get store(): ServiceKeyStore {
    return this.options.store;
  }

  /** Reads every key from the store (at start). A failure is logged; the timer reads again. */
  async load(): Promise<void> {
    // Listening first: a write between the read and the LISTEN would otherwise be missed.
    await this.listener?.connect();
    await this.reload('start');
  }

  /** True while any service key is stored (auth is then on, whatever MANA_LLM_API_KEYS holds). */
  get hasKeys(): boolean {
    return this.index.size > 0;
  }

  /** How many service keys this replica knows. */
  get count(): number {
    return this.index.size;
  }

  /**
   * Grows with every change of the keys, and when an expiry or a grace end
   * passes: that moment changes a key's answer without any write, and the
   * key check learns it only here. Asked on every request of a remembered
   * connection, so the common case is one clock read and one comparison.
   */
  get epoch(): number {
    const now = this.now();
    if (now >= this.nextChangeAt) {
      this.changes++;
      this.nextChangeAt = this.index.nextChange(now);
    }
    return this.changes;
  }

  /** The caller of the key with this SHA-256 (memory only). */
  callerOf(digest: Buffer): ServiceKeyCaller | undefined {
    return this.index.callerOf(digest, this.now());
  }

  /** The key a presented key string authenticates as, if any (memory only). */
  lookup(presented: string): StoredServiceKey | undefined {
    return this.index.lookup(presented, this.now());
  }

  /** Every change of the index goes through here, so the epoch cannot miss one. */
  private changeIndex(change: (index: KeyIndex) => void): void {
    change(this.index);
    this.changes++;
    this.nextChangeAt = this.index.nextChange(this.now());
  }

  /** Notes a use of key `id` now; written in the next flush. */
  noteUsed(id: string): void {
    this.pendingUses.set(id, this.now());
  }

  /** Every stored key with its newest use (a use not yet written included). */
  all(): StoredServiceKey[] {
    return this.index.all().map((key) => this.withPendingUse(key));
  }

  get(id: string): StoredServiceKey | undefined {
    const key = this.index.get(id);
    return key === undefined ? undefined : this.withPendingUse(key);
  }

  /** Runs a store write and applies its result to the index, in this replica's write order. */
  write(work: (store: ServiceKeyStore) => Promise<ServiceKeyWrite>): Promise<ServiceKeyWrite> {
    const store = this.options.store;
    return this.serial(async () => {
      const outcome = await retryWhileLocked(() => work(store));
      if (outcome.kind === 'written') this.changeIndex((index) => index.set(outcome.key));
      return outcome;
    });
  }

  /** Deletes key `id` from the store and the index; false when the store had none. */
  delete(id: string): Promise<boolean> {
    const store = this.options.store;
    return this.serial(async () => {
      const deleted = await retryWhileLocked(() => store.deleteServiceKey(id));
      this.changeIndex((index) => index.delete(id));
      this.pendingUses.delete(id);
      return deleted;
    });
  }

  /** Writes the collected uses, then stops the timer and closes the store (at shutdown). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    await this.listener?.close();
    await this.flushUses();
    await this.options.store.close();
  }

  private withPendingUse(key: StoredServiceKey): StoredServiceKey {
    const used = this.pendingUses.get(key.id);
    return used === undefined || (key.lastUsedAt !== null && key.lastUsedAt >= used) ? key : { ...key, lastUsedAt: used };
  }

  /** Another replica wrote key `id`: read it again (coalesced; a flood becomes one full read). */
  private refresh(id: string): void {
    if (!isKeyId(id) || this.closed) return;
    this.refreshes.add(id);
    if (this.refreshing) return;
    this.refreshing = true;
    void this.serial(async () => {
      const store = this.options.store;
      try {
        while (this.refreshes.size > 0 && !this.closed) {
          if (this.refreshes.size > MAX_PENDING_REFRESHES) {
            this.refreshes.clear();
            const keys = await store.serviceKeys();
            this.changeIndex((index) => index.replaceAll(keys));
            continue;
          }
          const [next] = this.refreshes;
          this.refreshes.delete(next!);
          const key = await store.serviceKey(next!);
          this.changeIndex((index) => (key === undefined ? index.delete(next!) : index.set(key)));
        }
      } catch (error) {
        // The next reconciliation reads everything again.
        this.options.logger.warn({ err: { message: (error as Error)?.message } }, 'service key not read again after a notification; the next reconciliation will');
      } finally {
        this.refreshing = false;
      }
    });
  }

  private async tick(): Promise<void> {
    await this.flushUses();
    if (!this.loaded || this.options.reconcile) await this.reload('reconcile');
  }

  private async reload(when: 'start' | 'reconcile'): Promise<void> {
    const store = this.options.store;
    if (this.closed) return;
    await this.serial(async () => {
      try {
        // The first read also migrates the key table: it may meet the usage writer's lock on a SQLite file.
        const keys = await retryWhileLocked(() => store.serviceKeys());
        this.changeIndex((index) => index.replaceAll(keys));
        if (!this.loaded && when === 'reconcile') this.options.logger.info({ keys: keys.length }, 'service keys read from the store');
        this.loaded = true;
      } catch (error) {
        // Keys known before keep working; a first read is retried on the next tick.
        if (when === 'start' || this.loaded) {
          this.options.logger.warn({ err: { message: (error as Error)?.message }, loaded: this.loaded }, 'service keys not read from the store; retrying');
        }
      }
    });
  }

  private async flushUses(): Promise<void> {
    const store = this.options.store;
    if (this.pendingUses.size === 0) return;
    const uses = new Map(this.pendingUses);
    this.pendingUses.clear();
    try {
      await retryWhileLocked(() => store.touchServiceKeys(uses));
      this.changeIndex((index) => {
        for (const [id, at] of uses) {
          const key = index.get(id);
          if (key !== undefined && (key.lastUsedAt === null || key.lastUsedAt < at)) index.set({ ...key, lastUsedAt: at });
        }
      });
    } catch (error) {
      // Approximate by design: put them back (a newer use wins) and try on the next tick.
      for (const [id, at] of uses) if (!this.pendingUses.has(id)) this.pendingUses.set(id, at);
      this.options.logger.warn({ err: { message: (error as Error)?.message } }, 'service key last use not written; retrying');
    }
  }
}
