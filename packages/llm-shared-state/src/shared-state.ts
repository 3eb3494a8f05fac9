/**
 * One replica's link to the state it shares with the others through
 * PostgreSQL. Nothing here is on a request's path: the router's transition
 * observer only queues (`publish`), and notifications apply to the router's
 * local cache, which is all a request ever reads.
 *
 *   local transition ─► pending (newest per subject, bounded) ─► upsert + NOTIFY (one transaction)
 *   NOTIFY from another replica ─► applyTransition (never re-announced: no echo)
 *   every 3 s, and after each reconnect ─► flush pending, full read of the table, config version check
 *   every 1 s ─► heartbeat: this replica's row refreshed, the replicas alive read (membership.ts)
 *   join (first heartbeat, and the first after a failed one) and clean leave (close) ─► NOTIFY
 *
 * PostgreSQL down, slow or restarted: the state turns `degraded`, transitions
 * wait in `pending`, and the first successful round after it returns (the
 * listener reconnects with backoff) flushes them and reads everything again.
 */
import type { HealthTransition } from '@mana/llm-router';
import { openConnection, type Connection, type UsageDatabase } from '@mana/llm-usage-store';
import type { Kysely } from 'kysely';
import { HEALTH_CHANNEL, decodePayload, publishTransitions, readCurrentTransitions, subjectKey, type SharedTransition } from './health-rows.js';
import { Membership } from './membership.js';
import { NotifyListener } from './notify-listener.js';
import type { Received } from './received.js';
import { REPLICAS_CHANNEL, announceJoin, beat, decodeNotice, leave } from './replica-rows.js';
import { CONFIG_CHANNEL, decodeConfigNotice, readSharedConfig, readSharedConfigVersion, seedSharedConfig, swapSharedConfig, type ConfigNotice, type ConfigWrite, type SharedConfig, type SwapResult } from './shared-config.js';

export const DEFAULT_RECONCILE_INTERVAL_MS = 3_000; // 3 s: repairs a lost notification within this
/** Local transitions waiting for PostgreSQL, newest per provider/target: more subjects than any config has. */
export const MAX_PENDING_TRANSITIONS = 1_000;
/** At most one report of dropped notifications and rows per this period: whoever sends them cannot flood the log. */
export const DEFAULT_REJECT_REPORT_INTERVAL_MS = 60_000; // 1 min
/** How often a replica refreshes its row and reads who else is alive. */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 1_000; // 1 s
/** A replica is alive while its last heartbeat is this recent: three beats, so one slow round does not drop it. */
export const DEFAULT_LIVENESS_WINDOW_MS = 3_000; // 3 s
/** A clean leave waits this long for PostgreSQL at most: shutdown is not held up by a database that is down. */
const LEAVE_TIMEOUT_MS = 1_000; // 1 s

export type SharedStateName = 'starting' | 'ok' | 'degraded';

export interface SharedStateStatus {
  readonly state: SharedStateName;
  readonly replica: string;
  /** Epoch ms of the last change of `state`. */
  readonly since: number;
  readonly lastError: string | null;
  /** Local transitions written and announced. */
  readonly published: number;
  /** Other replicas' transitions that changed this replica's cache. */
  readonly applied: number;
  /** Local transitions waiting for PostgreSQL. */
  readonly pending: number;
  /** Local transitions dropped because `pending` was full. */
  readonly dropped: number;
  /** Notifications and rows from PostgreSQL dropped because a field failed its check (received.ts). */
  readonly rejected: number;
  /** Epoch ms of the last full read that succeeded. */
  readonly lastSyncAt: number | null;
}

export interface SharedStateOptions {
  /** PostgreSQL URL (a secret: never logged or shown). */
  readonly url: string;
  /** This replica's name, on every row and notification it writes. */
  readonly replica: string;
  /** Applies another replica's transition to the local cache (`router.applyHealthTransition`). */
  readonly applyTransition: (transition: HealthTransition) => boolean;
  /** State changes and applied transitions, for logs. Must not throw. */
  readonly onStateChange?: (status: SharedStateStatus) => void;
  readonly onApplied?: (shared: SharedTransition) => void;
  /**
   * Notifications and rows dropped because a field failed its check: at most
   * once per `rejectReportIntervalMs`, with how many since the last call and
   * the problem of the latest one. Must not throw.
   */
  readonly onRejected?: (report: { readonly dropped: number; readonly problem: string }) => void;
  readonly rejectReportIntervalMs?: number;
  readonly reconcileIntervalMs?: number;
  /** The count of replicas alive changed (this one included), for logs. Must not throw. */
  readonly onReplicasChange?: (alive: number) => void;
  readonly heartbeatIntervalMs?: number;
  readonly livenessWindowMs?: number;
  readonly now?: () => number;
}

/**
 * Whoever serves the shared config on this replica (the gateway's config
 * sync), told of the versions the shared state sees. Given to `start`: the
 * shared state reads nothing from PostgreSQL before, so nothing is missed,
 * and the follower may itself be built on this SharedState.
 */
export interface SharedConfigFollower {
  /** The version this replica serves, to tell whether the shared one is newer. */
  readonly currentVersion: string;
  /** The shared config is a version this replica does not serve: fetch and apply it. Must not throw. */
  onConfigChanged(notice: ConfigNotice): void;
}

export class SharedStateUnavailable extends Error {
  override readonly name = 'SharedStateUnavailable';
}

export class SharedState {
  private readonly now: () => number;
  private readonly listener: NotifyListener;
  private connection: Connection | undefined;
  private opening: Promise<Connection | undefined> | undefined;
  private readonly pending = new Map<string, HealthTransition>();
  private flushing: Promise<void> | undefined;
  private syncing: Promise<boolean> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private beating: Promise<boolean> | undefined;
  private readonly membership: Membership;
  /** Whether the others were told of this replica since its last failed heartbeat. */
  private joined = false;
  private closed = false;
  /** Set by `start`, before which no config version is read. */
  private configFollower: SharedConfigFollower | undefined;
  private state: SharedStateName = 'starting';
  private since: number;
  private lastError: string | null = null;
  private lastSyncAt: number | null = null;
  private published = 0;
  private applied = 0;
  private dropped = 0;
  private rejected = 0;
  private rejectedUnreported = 0;
  private lastRejectReport = -Infinity;

  constructor(private readonly options: SharedStateOptions) {
    this.now = options.now ?? Date.now;
    this.since = this.now();
    this.membership = new Membership(options.replica);
    this.listener = new NotifyListener({
      url: options.url,
      channels: [HEALTH_CHANNEL, CONFIG_CHANNEL, REPLICAS_CHANNEL],
      onNotification: (channel, payload) => this.onNotification(channel, payload),
      onConnected: () => void this.sync(),
      onLost: (error) => this.degrade(error),
    });
  }

  get status(): SharedStateStatus {
    return {
      state: this.state,
      replica: this.options.replica,
      since: this.since,
      lastError: this.lastError,
      published: this.published,
      applied: this.applied,
      pending: this.pending.size,
      dropped: this.dropped,
      rejected: this.rejected,
      lastSyncAt: this.lastSyncAt,
    };
  }

  /**
   * Replicas alive, this one included (at least 1): read at every heartbeat,
   * and told at once of a join or clean leave. While PostgreSQL cannot be
   * reached, the count last known.
   */
  aliveReplicas(): number {
    return this.membership.alive;
  }

  /**
   * Connects, listens and reads the current state. Resolves true once that is
   * done, or false after `timeoutMs` (the replica then starts on its own
   * state, degraded, and keeps retrying in the background). From now on
   * `config` is told of every shared config version seen.
   */
  async start(timeoutMs: number, config: SharedConfigFollower): Promise<boolean> {
    this.configFollower = config;
    const interval = this.options.reconcileIntervalMs ?? DEFAULT_RECONCILE_INTERVAL_MS;
    this.timer = setInterval(() => void this.sync(), interval);
    this.timer.unref();
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS);
    this.heartbeatTimer.unref();
    let timeout: NodeJS.Timeout | undefined;
    // Listening before the first heartbeat reads the table: a replica joining meanwhile is not missed.
    const first = (async () => (await this.listener.connect()) && (await this.sync()) && (await this.heartbeat()))();
    const gaveUp = new Promise<boolean>((resolve) => {
      timeout = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([first, gaveUp]);
    } finally {
      clearTimeout(timeout);
    }
  }

  /** The router's transition observer: queues and returns at once. */
  publish(transition: HealthTransition): void {
    if (this.closed) return;
    const key = subjectKey(transition);
    this.pending.delete(key); // re-inserted last: the map's order is the drop order
    this.pending.set(key, transition);
    if (this.pending.size > MAX_PENDING_TRANSITIONS) {
      this.pending.delete(this.pending.keys().next().value!);
      this.dropped += 1;
    }
    void this.flush();
  }

  /** The shared config, or undefined when none is stored yet. Throws SharedStateUnavailable when PostgreSQL cannot be reached. */
  async readConfig(): Promise<SharedConfig | undefined> {
    return this.withDb((db) => readSharedConfig(db));
  }

  async seedConfig(write: ConfigWrite): Promise<SharedConfig> {
    return this.withDb((db) => seedSharedConfig(db, write));
  }

  async swapConfig(expectedVersion: string, write: ConfigWrite): Promise<SwapResult> {
    return this.withDb((db) => swapSharedConfig(db, expectedVersion, write));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    clearInterval(this.heartbeatTimer);
    await this.listener.close();
    await Promise.allSettled([this.flushing, this.syncing, this.beating]);
    const connection = this.connection ?? (await this.opening);
    this.connection = undefined;
    // A clean leave: the others take this replica's share at once instead of after the liveness window.
    if (connection !== undefined && this.joined) await withTimeout(leave(connection.db, this.options.replica), LEAVE_TIMEOUT_MS).catch(() => undefined);
    await connection?.close().catch(() => undefined);
  }

  private onNotification(channel: string, payload: string): void {
    if (channel === CONFIG_CHANNEL) {
      this.configHead(decodeConfigNotice(payload));
      return;
    }
    if (channel === REPLICAS_CHANNEL) {
      const notice = decodeNotice(payload);
      if (!notice.ok) return this.reject(notice.problem);
      if (this.membership.notice(notice.value)) this.options.onReplicasChange?.(this.membership.alive);
      return;
    }
    const shared = decodePayload(payload, this.now());
    if (!shared.ok) return this.reject(shared.problem);
    // Our own announcement coming back: already in our cache, and re-applying could only echo.
    if (shared.value.replica === this.options.replica) return;
    this.apply(shared.value);
  }

  /** A config version seen (notified, or read by a round): fetched when it is not the one this replica serves. */
  private configHead(head: Received<ConfigNotice>): void {
    if (!head.ok) return this.reject(head.problem);
    const follower = this.configFollower;
    if (follower !== undefined && head.value.version !== follower.currentVersion) follower.onConfigChanged(head.value);
  }

  private reject(problem: string): void {
    this.rejected += 1;
    this.rejectedUnreported += 1;
    const now = this.now();
    if (now - this.lastRejectReport < (this.options.rejectReportIntervalMs ?? DEFAULT_REJECT_REPORT_INTERVAL_MS)) return;
    this.lastRejectReport = now;
    const dropped = this.rejectedUnreported;
    this.rejectedUnreported = 0;
    this.options.onRejected?.({ dropped, problem });
  }

  private apply(shared: SharedTransition): void {
    if (!this.options.applyTransition(shared.transition)) return;
    this.applied += 1;
    this.options.onApplied?.(shared);
  }

  /** Flushes what waits, reads the whole table and checks the config version; true when all of it worked. */
  private sync(): Promise<boolean> {
    this.syncing ??= this.syncNow().finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  private async syncNow(): Promise<boolean> {
    if (this.closed) return false;
    try {
      const db = await this.db();
      await this.flush();
      if (this.pending.size > 0) return false; // the flush failed: it degraded already
      for (const row of await readCurrentTransitions(db, this.now())) {
        if (row.ok) this.apply(row.value);
        else this.reject(row.problem);
      }
      const head = await readSharedConfigVersion(db);
      if (head !== undefined) this.configHead(head);
      this.lastSyncAt = this.now();
      if (this.listener.connected) this.setState('ok', null);
      return this.listener.connected;
    } catch (error) {
      this.degrade(error);
      return false;
    }
  }

  /** Refreshes this replica's row and reads who is alive; announces the join when the others may not know of it. */
  private heartbeat(): Promise<boolean> {
    this.beating ??= this.beatNow().finally(() => (this.beating = undefined));
    return this.beating;
  }

  private async beatNow(): Promise<boolean> {
    if (this.closed) return false;
    const replica = this.options.replica;
    try {
      const db = await this.db();
      const mark = this.membership.readStarted();
      const names = await beat(db, replica, this.options.livenessWindowMs ?? DEFAULT_LIVENESS_WINDOW_MS);
      if (!this.joined) {
        await announceJoin(db, replica);
        this.joined = true;
      }
      if (this.membership.read(names, mark)) this.options.onReplicasChange?.(this.membership.alive);
      return true;
    } catch (error) {
      // Our row may have expired meanwhile: the next heartbeat that works announces the join again.
      this.joined = false;
      this.degrade(error);
      return false;
    }
  }

  private flush(): Promise<void> {
    this.flushing ??= this.flushNow().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async flushNow(): Promise<void> {
    while (this.pending.size > 0 && !this.closed) {
      // Entries stay queued until written, so `pending` counts them while PostgreSQL is slow.
      const batch = [...this.pending.entries()];
      const replica = this.options.replica;
      try {
        const db = await this.db();
        await publishTransitions(db, batch.map(([, transition]): SharedTransition => ({ transition, replica })));
      } catch (error) {
        this.degrade(error);
        return; // the next sync round (every few seconds, or on reconnect) tries again
      }
      this.published += batch.length;
      // Removed unless something newer about the same subject arrived meanwhile.
      for (const [key, transition] of batch) if (this.pending.get(key) === transition) this.pending.delete(key);
    }
  }

  private async withDb<T>(run: (db: Kysely<UsageDatabase>) => Promise<T>): Promise<T> {
    let db: Kysely<UsageDatabase>;
    try {
      db = await this.db();
      return await run(db);
    } catch (error) {
      if (error instanceof SharedStateUnavailable) throw error;
      this.degrade(error);
      throw new SharedStateUnavailable(`the shared state database cannot be reached: ${messageOf(error)}`, { cause: error });
    }
  }

  /** The pooled connection (opened, and migrated, on first use and again after a failed open). */
  private async db(): Promise<Kysely<UsageDatabase>> {
    if (this.connection !== undefined) return this.connection.db;
    this.opening ??= openConnection({ kind: 'postgres', url: this.options.url }, (error) => this.degrade(error)).then(
      (connection) => {
        this.opening = undefined;
        if (this.closed) {
          void connection.close();
          return undefined;
        }
        this.connection = connection;
        return connection;
      },
      (error: unknown) => {
        this.opening = undefined;
        throw error;
      },
    );
    const connection = await this.opening;
    if (connection === undefined) throw new SharedStateUnavailable('the shared state is closed');
    return connection.db;
  }

  private degrade(error: unknown): void {
    this.setState('degraded', messageOf(error));
  }

  private setState(state: SharedStateName, error: string | null): void {
    if (this.closed) return;
    this.lastError = error ?? this.lastError;
    if (state === this.state) return;
    this.state = state;
    this.since = this.now();
    this.options.onStateChange?.(this.status);
  }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && !error.message.includes(code) ? `${error.message} (${code})` : error.message || (typeof code === 'string' ? code : error.name);
}
