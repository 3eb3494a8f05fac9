/**
 * A lingering close for a request refused before its body was read (413).
 *
 * Why: the client is still sending. Node's server ends the socket once the
 * response is written (`Connection: close`) and destroys it as soon as the FIN
 * is out; closing a socket that still has unread bytes makes the kernel send a
 * TCP reset, and a reset can overtake the 413 — the client then sees
 * "connection reset" instead of the answer. So after answering we keep reading
 * and discarding the rest of the body, and close when the body ends, when the
 * client closes its side, or after `maxMs`. Past `maxBytes` we stop reading
 * but keep the connection until `maxMs`: TCP flow control then stalls the
 * sender, which gives it time to read the 413 (a fast sender on loopback
 * pushes 1 MB in a few ms, too soon to have read anything before a reset).
 * Memory stays bounded (nothing is buffered) and so does the time.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export const LINGER_DEFAULTS = {
  maxMs: 1_000, // 1 s: the longest a refused request keeps its connection
  maxBytes: 1024 * 1024, // 1 MB more is read and discarded at most; then reading stops until maxMs
} as const;

export interface LingerLimits {
  readonly maxMs: number;
  readonly maxBytes: number;
}

/**
 * Call right after deciding to refuse `req`, in the same tick as writing the
 * response on `res` (which must carry `Connection: close`).
 */
export function discardBodyThenClose(req: IncomingMessage, res: ServerResponse, limits: LingerLimits = LINGER_DEFAULTS): void {
  const socket = req.socket;
  let discarded = 0;
  let responded = false;
  let bodyEnded = req.readableEnded;
  let done = false;

  const close = (): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    req.off('data', onData);
    req.off('end', onEnd);
    res.off('finish', onFinish);
    socket.off('end', close);
    // The response is a few hundred bytes written long ago (or the time is up): nothing worth waiting for.
    socket.destroy();
  };
  const onData = (chunk: Buffer): void => {
    discarded += chunk.length;
    if (discarded > limits.maxBytes) {
      req.off('data', onData);
      req.pause();
    }
  };
  const onEnd = (): void => {
    bodyEnded = true;
    // Nothing left unread: once the response is out, closing cannot reset it.
    if (responded) close();
  };
  const onFinish = (): void => {
    responded = true;
    // Node's server has just ended the socket (the response and a FIN are
    // queued) and would destroy it once they are written: take that over.
    socket.removeListener('finish', socket.destroy);
    if (bodyEnded || socket.destroyed) close();
  };

  const timer = setTimeout(close, limits.maxMs);
  timer.unref();
  req.on('data', onData);
  req.on('end', onEnd);
  socket.once('end', close); // the client half-closed: nothing more will come
  socket.once('close', () => {
    done = true;
    clearTimeout(timer);
  });
  // 'finish' is emitted asynchronously after the last write, so this listener
  // always runs after the server's own (which ends the socket).
  res.once('finish', onFinish);
  req.resume();
}
