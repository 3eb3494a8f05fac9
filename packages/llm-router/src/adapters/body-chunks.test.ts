import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { RAW_POST, useRawServer } from '../test-support.js';
import { openBody } from './body-chunks.js';

const serve = useRawServer();

/** An upstream that sends its head and one event, then holds the connection; `closed()` settles once it is closed. */
async function oneEventThenHold() {
  let closed: Promise<void> | undefined;
  const dispatcher = await serve((res, c) => {
    closed = c;
    res.writeHead(200);
    res.write('data: first\n\n');
  });
  return { dispatcher, closed: () => closed };
}

describe('openBody (stream bodies without a Readable)', () => {
  it('pauses the upstream while the consumer is slow, so a stream buffers a bounded amount', async () => {
    let written = 0;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const total = 64 * 1024 * 1024; // 64 MiB the client will not read in time
    const dispatcher = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const pump = (): void => {
        while (written < total) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const { body } = await openBody(dispatcher, RAW_POST, undefined);
    let read = (await body.next()).value!.length;
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Our buffer (64 KiB) plus the kernel's loopback socket buffers: far below the 64 MiB on offer.
    expect(written).toBeLessThan(16 * 1024 * 1024);
    for await (const c of body) read += c.length;
    expect(read).toBe(total);
  });

  it('an abort after the headers fails the next read with the reason and closes the connection', async () => {
    const upstream = await oneEventThenHold();
    const signal = new EventEmitter() as EventEmitter & { aborted: boolean; reason: unknown };
    signal.aborted = false;
    const { body } = await openBody(upstream.dispatcher, RAW_POST, signal);
    expect(Buffer.from((await body.next()).value!).toString()).toBe('data: first\n\n');
    const reason = Object.assign(new Error('no first byte'), { code: 'first_byte_timeout' });
    signal.aborted = true;
    signal.reason = reason;
    signal.emit('abort');
    await expect(body.next()).rejects.toBe(reason);
    await upstream.closed();
  });

  it('destroy() before the end closes the upstream connection', async () => {
    const upstream = await oneEventThenHold();
    const { body } = await openBody(upstream.dispatcher, RAW_POST, undefined);
    await body.next();
    body.destroy();
    await upstream.closed();
  });

  it('a cut mid-body rejects the next read with undici’s socket error', async () => {
    const dispatcher = await serve((res) => {
      res.writeHead(200);
      res.write('data: first\n\n', () => res.socket?.destroy());
    });
    const { body } = await openBody(dispatcher, RAW_POST, undefined);
    await body.next();
    await expect(body.next()).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
  });

  it('an error status still yields its body as text', async () => {
    const dispatcher = await serve((res) => {
      res.writeHead(429, { 'content-type': 'application/json' });
      res.end('{"error":"slow down"}');
    });
    const { statusCode, body } = await openBody(dispatcher, RAW_POST, undefined);
    expect(statusCode).toBe(429);
    expect(await body.text(1024)).toBe('{"error":"slow down"}');
  });

  it('an error body is read up to the bound only: truncated, and the endless rest never read', async () => {
    let closed = false;
    const dispatcher = await serve((res) => {
      res.writeHead(400, { 'content-type': 'text/html' });
      res.on('close', () => (closed = true));
      const chunk = Buffer.alloc(16 * 1024, 0x62);
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    const { statusCode, body } = await openBody(dispatcher, RAW_POST, undefined);
    expect(statusCode).toBe(400);
    expect(await body.text(40_000)).toBe('b'.repeat(40_000));
    await expect.poll(() => closed).toBe(true);
  });
});
