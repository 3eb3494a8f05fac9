/**
 * Relays a stream result as SSE. The target is fixed once the response head is
 * out, so a failure after that ends the stream with an explicit error event.
 */
import type { ServerResponse } from 'node:http';
import { isRouterError, type StreamResult } from '@mana/llm-router';
import type { GatewayContext } from '../context.js';
import type { ClientAbort } from '../http/client-abort.js';
import { fromRouterError, gatewayError } from '../http/errors.js';
import { drained, type Headers } from '../http/respond.js';
import type { Exchange } from './exchange.js';
import type { StreamEncoder } from '../dialects/codec.js';

// A named function rather than a closure per event: the SSE loop is the hot path.
function uncork(res: ServerResponse): void {
  res.uncork();
}

/** Lets the router release the upstream of a stream nobody will read. */
export async function closeStream(result: StreamResult): Promise<void> {
  const iterator = result.events[Symbol.asyncIterator]();
  try {
    await iterator.return?.();
  } catch {
    // the upstream is being torn down either way
  }
}

export async function relayStream(
  ctx: GatewayContext,
  res: ServerResponse,
  ex: Exchange,
  result: StreamResult,
  headers: Headers,
  signal: ClientAbort,
  /** Writes the events, the end and a failure as the API's SSE frames. */
  encoder: StreamEncoder,
): Promise<void> {
  headers['content-type'] = 'text/event-stream; charset=utf-8';
  headers['cache-control'] = 'no-cache';
  headers['x-accel-buffering'] = 'no';
  if (ctx.state.draining) headers.connection = 'close';
  ex.status = 200;
  res.writeHead(200, headers);
  ex.ttfbAt = performance.now();
  try {
    for await (const event of result.events) {
      if (res.destroyed) break; // leaving the loop returns the iterator: the router closes the upstream
      // Events parsed from one upstream read arrive in the same tick: corking until
      // the next tick sends them in one write instead of one syscall per event.
      res.cork();
      const ok = res.write(encoder.event(event));
      process.nextTick(uncork, res);
      if (!ok) await drained(res);
    }
  } catch (error) {
    ex.tokenUsage = result.usage;
    if (signal.aborted || res.destroyed) return ex.clientClosed();
    // The first byte is out, so the target can no longer change: end the stream
    // with an explicit error event so the client cannot mistake a truncated
    // answer for a complete one.
    const gwError = isRouterError(error)
      ? fromRouterError(error, ex.model)
      : gatewayError('stream_interrupted', 'The upstream stream failed.');
    ex.code = gwError.code;
    res.end(encoder.failed(gwError));
    return;
  }
  ex.tokenUsage = result.usage;
  if (signal.aborted || res.destroyed) return ex.clientClosed();
  res.end(encoder.end(result));
}
