import { createServer, type Server } from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { discardBodyThenClose } from './linger.js';
import { BodyError, readBody } from './read-body.js';

const LIMIT = 64 * 1024; // 64 kB body limit

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/**
 * A server that refuses bodies over LIMIT with a 413, as the chat route does.
 * Per request: `closed`, ms from the refusal until the server closed the
 * connection; `received`, body bytes the server read.
 */
async function start(): Promise<{ port: number; closed: number[]; received: number[] }> {
  const closed: number[] = [];
  const received: number[] = [];
  server = createServer((req, res) => {
    const i = received.push(0) - 1;
    req.on('data', (chunk: Buffer) => (received[i]! += chunk.length));
    readBody(req, LIMIT).then(
      () => res.end('ok'),
      (error: unknown) => {
        if (!(error instanceof BodyError) || error.kind !== 'too_large') return;
        res.setHeader('connection', 'close');
        res.writeHead(413, { 'content-type': 'application/json' });
        res.end('{"error":{"code":"request_too_large"}}');
        const refusedAt = Date.now();
        req.socket.once('close', () => closed.push(Date.now() - refusedAt));
        discardBodyThenClose(req, res, { maxMs: 1_000, maxBytes: 1024 * 1024 });
      },
    );
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, closed, received };
}

/** Waits until the server saw `n` refused connections close. */
async function serverClosed(closed: number[], n: number): Promise<void> {
  for (let i = 0; i < 100 && closed.length < n; i += 1) await new Promise((resolve) => setTimeout(resolve, 20));
}

/**
 * A client like most HTTP clients: it sends its body before it reads the
 * response. It writes `bodyBytes` (declared `declared`), waits, then reads.
 */
function sendThenRead(
  port: number,
  declared: number,
  bodyBytes: number,
  readAfterMs: number,
  allowHalfOpen = false,
): Promise<{ text: string; error?: string | undefined }> {
  return new Promise((resolve) => {
    // allowHalfOpen: the server's FIN (after the 413) does not make the client close its side.
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen });
    let text = '';
    let error: string | undefined;
    socket.pause();
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code));
    if (allowHalfOpen) socket.on('end', () => setTimeout(() => socket.destroy(), 3_000).unref()); // bounded in case the server never closes
    socket.on('close', () => resolve({ text, error }));
    socket.on('connect', () => {
      socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`);
      const piece = Buffer.alloc(16 * 1024, 0x61);
      let sent = 0;
      const pump = (): void => {
        while (sent < bodyBytes && !socket.destroyed) {
          sent += piece.length;
          if (!socket.write(piece)) return void socket.once('drain', pump);
        }
      };
      pump();
      setTimeout(() => socket.resume(), readAfterMs);
    });
  });
}

describe('discardBodyThenClose', () => {
  it('a client still sending its body when refused receives the 413, not a reset', async () => {
    const { port } = await start();
    for (let i = 0; i < 3; i += 1) {
      const r = await sendThenRead(port, 4 * LIMIT, 2 * LIMIT, 100);
      expect(r.error, r.text.slice(0, 100)).toBeUndefined();
      expect(r.text).toMatch(/^HTTP\/1\.1 413 /);
      expect(r.text).toContain('request_too_large');
    }
  });

  it('bounded: an endless body is read up to the byte budget, then held until the time budget; a stalled one closes after the time budget', async () => {
    const { port, closed, received } = await start();
    const endless = await sendThenRead(port, 1_000_000_000, 64 * 1024 * 1024, 0, true);
    expect(endless.text).toMatch(/^HTTP\/1\.1 413 /);
    await serverClosed(closed, 1);
    expect(closed[0], 'closed after the 1 s budget').toBeGreaterThanOrEqual(900);
    expect(closed[0]).toBeLessThan(3_000);
    // The body limit, then 1 MB discarded, plus at most a few reads in flight.
    expect(received[0]).toBeLessThan(LIMIT + 1024 * 1024 + 512 * 1024);
    const stalled = await sendThenRead(port, 1_000_000_000, 2 * LIMIT, 0, true);
    expect(stalled.text).toMatch(/^HTTP\/1\.1 413 /);
    await serverClosed(closed, 2);
    expect(closed[1], `closed after the 1 s budget: ${closed.join(', ')}`).toBeGreaterThanOrEqual(900);
    expect(closed[1]).toBeLessThan(3_000);
  });

  it('a client that half-closes (sent its whole body) is closed at once', async () => {
    const { port, closed } = await start();
    const r = await new Promise<string>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${2 * LIMIT}\r\n\r\n${'a'.repeat(2 * LIMIT)}`);
      });
      let text = '';
      socket.setEncoding('latin1');
      socket.on('data', (d: string) => (text += d));
      socket.on('close', () => resolve(text));
    });
    expect(r).toMatch(/^HTTP\/1\.1 413 /);
    await serverClosed(closed, 1);
    expect(closed[0]).toBeLessThan(500);
  });
});
