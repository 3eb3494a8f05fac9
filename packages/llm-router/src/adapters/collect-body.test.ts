import { describe, expect, it } from 'vitest';
import { RAW_POST, useRawServer } from '../test-support.js';
import { collectBody } from './collect-body.js';

const LIMITS = { maxBytes: 1024 * 1024, maxErrorBytes: 64 * 1024 };

const serve = useRawServer();

describe('collectBody (whole bodies without a Readable)', () => {
  it('decodes as undici’s body.text() does: chunks joined, a UTF-8 BOM skipped', async () => {
    const dispatcher = await serve((res) => {
      res.writeHead(200);
      res.write(Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0xe2]));
      setTimeout(() => res.end(Buffer.from([0x82, 0xac, 0x7d])), 10);
    });
    const res = await collectBody(dispatcher, RAW_POST, undefined, undefined, LIMITS);
    expect(res.statusCode).toBe(200);
    expect(res.text).toBe('{€}');
  });

  it('an aborted signal aborts the request with its reason', async () => {
    const dispatcher = await serve(() => undefined); // never answers
    const controller = new AbortController();
    const reason = new Error('caller left');
    setTimeout(() => controller.abort(reason), 20);
    await expect(collectBody(dispatcher, RAW_POST, controller.signal, undefined, LIMITS)).rejects.toBe(reason);
  });

  it('a success body past maxBytes rejects with response_too_large and closes the connection at once', async () => {
    let closed = false;
    let written = 0;
    const dispatcher = await serve((res) => {
      res.writeHead(200);
      res.on('close', () => (closed = true));
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const pump = (): void => {
        // An endless body: stops only when the client goes away.
        while (!res.destroyed && written < 64 * 1024 * 1024 && res.write(chunk)) written += chunk.length;
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    await expect(collectBody(dispatcher, RAW_POST, undefined, undefined, { maxBytes: 256 * 1024, maxErrorBytes: 1024 })).rejects.toMatchObject({
      code: 'response_too_large',
      message: 'the response body exceeds max_response_bytes (262144 bytes)',
    });
    await expect.poll(() => closed).toBe(true);
    expect(written).toBeLessThan(16 * 1024 * 1024);
  });

  it('an error body is kept up to maxErrorBytes and truncated beyond', async () => {
    const dispatcher = await serve((res) => {
      res.writeHead(500, { 'content-type': 'text/html' });
      res.end('x'.repeat(10_000));
    });
    const res = await collectBody(dispatcher, RAW_POST, undefined, undefined, { maxBytes: 1024 * 1024, maxErrorBytes: 1_000 });
    expect(res.statusCode).toBe(500);
    expect(res.text).toBe('x'.repeat(1_000));
  });
});
