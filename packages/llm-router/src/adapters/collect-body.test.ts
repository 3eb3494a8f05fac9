import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { collectBody } from './collect-body.js';

const POST = { method: 'POST' as const, path: '/', body: '{}', headersTimeout: 0, bodyTimeout: 10_000 };

let server: Server | undefined;
let pool: Pool | undefined;

afterEach(async () => {
  await pool?.destroy();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
  pool = undefined;
});

async function serve(handler: (res: ServerResponse, closed: Promise<void>) => void): Promise<Pool> {
  server = createServer((req, res) => {
    req.resume();
    handler(res, new Promise((resolve) => res.on('close', () => resolve())));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return pool;
}

describe('collectBody (whole bodies without a Readable)', () => {
  it('decodes as undici’s body.text() does: chunks joined, a UTF-8 BOM skipped', async () => {
    const dispatcher = await serve((res) => {
      res.writeHead(200);
      res.write(Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0xe2]));
      setTimeout(() => res.end(Buffer.from([0x82, 0xac, 0x7d])), 10);
    });
    const res = await collectBody(dispatcher, POST, undefined, undefined);
    expect(res.statusCode).toBe(200);
    expect(res.text).toBe('{€}');
  });

  it('an aborted signal aborts the request with its reason', async () => {
    const dispatcher = await serve(() => undefined); // never answers
    const controller = new AbortController();
    const reason = new Error('caller left');
    setTimeout(() => controller.abort(reason), 20);
    await expect(collectBody(dispatcher, POST, controller.signal, undefined)).rejects.toBe(reason);
  });
});
