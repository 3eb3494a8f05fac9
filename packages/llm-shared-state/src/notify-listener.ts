/**
 * The one PostgreSQL connection that LISTENs. It is a dedicated client, not a
 * pooled one: a pool hands connections out and back, and a LISTEN lives only
 * as long as its connection. When the connection fails it is replaced after a
 * backoff (250 ms, doubling to 5 s), and `onConnected` runs again so the
 * owner can read what it missed while nobody was listening.
 */
import pg from 'pg';

export const RECONNECT_FIRST_MS = 250; // 250 ms
export const RECONNECT_MAX_MS = 5_000; // 5 s
const CONNECT_TIMEOUT_MS = 2_000; // 2 s: a stopped server is noticed quickly

export interface NotifyListenerOptions {
  readonly url: string;
  readonly channels: readonly string[];
  readonly onNotification: (channel: string, payload: string) => void;
  /** Runs after each (re)connect, once the LISTENs are in place. */
  readonly onConnected: () => void;
  /** The connection failed or could not be made; a retry is scheduled. */
  readonly onLost: (error: Error) => void;
}

export class NotifyListener {
  private client: pg.Client | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private delayMs = RECONNECT_FIRST_MS;
  private closed = false;

  constructor(private readonly options: NotifyListenerOptions) {}

  get connected(): boolean {
    return this.client !== undefined;
  }

  /** Connects now; resolves true once listening, false when it failed (a retry is then scheduled). */
  async connect(): Promise<boolean> {
    if (this.closed || this.client !== undefined) return this.client !== undefined;
    const client = new pg.Client({ connectionString: this.options.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true });
    let failed = false;
    const fail = (error: Error): void => {
      if (failed) return;
      failed = true;
      if (this.client === client) this.client = undefined;
      client.removeAllListeners('notification');
      void client.end().catch(() => undefined);
      if (this.closed) return;
      this.options.onLost(error);
      this.scheduleRetry();
    };
    client.on('error', fail);
    client.on('end', () => fail(new Error('the notification connection closed')));
    client.on('notification', (message) => {
      if (message.payload !== undefined) this.options.onNotification(message.channel, message.payload);
    });
    try {
      await client.connect();
      for (const channel of this.options.channels) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (error) {
      fail(error instanceof Error ? error : new Error(String(error)));
      return false;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return false;
    }
    this.client = client;
    this.delayMs = RECONNECT_FIRST_MS;
    this.options.onConnected();
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private scheduleRetry(): void {
    if (this.retryTimer !== undefined) return;
    const delay = this.delayMs;
    this.delayMs = Math.min(RECONNECT_MAX_MS, this.delayMs * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, delay);
    this.retryTimer.unref();
  }
}
