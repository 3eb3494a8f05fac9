import type { Socket } from 'node:net';
import { buildConnector, errors } from 'undici';

/**
 * An undici connector whose connect timeout fires on time.
 *
 * undici runs its own connect timeout on "fast timers" that tick about once a
 * second, so a 1 s `connect_timeout` really fires somewhere between 1 and 2 s.
 * That is too coarse for a failover budget in the hundreds of milliseconds, so
 * undici's timer is switched off (`timeout: 0`) and a native, unref'd timer per
 * new connection destroys the socket with undici's own `ConnectTimeoutError`
 * (code `UND_ERR_CONNECT_TIMEOUT`, classified as `connect_timeout`). This costs
 * one timer per connection, not per request: keep-alive sockets are reused.
 */
export function preciseConnector(
  timeoutMs: number,
  base: buildConnector.connector = buildConnector({ timeout: 0 }),
): buildConnector.connector {
  return (options, callback) => {
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    const socket = base(options, (...args) => {
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      callback(...args);
    }) as unknown as Socket | undefined; // undici's connector returns the socket; its type says void
    if (!settled && socket !== undefined && timeoutMs > 0) {
      timer = setTimeout(onConnectTimeout, timeoutMs, socket, options, timeoutMs);
      timer.unref();
    }
    return socket;
  };
}

function onConnectTimeout(socket: Socket, options: buildConnector.Options, timeoutMs: number): void {
  // Destroying with an error makes the base connector call back with it.
  socket.destroy(new errors.ConnectTimeoutError(`connect timeout (${options.hostname}:${options.port}, ${timeoutMs} ms)`));
}
