import { describe, expect, it } from 'vitest';
import { RAW_POST, useRawServer } from '../test-support.js';
import { collectBody } from './collect-body.js';

const serve = useRawServer();

describe('collectBody (whole bodies without a Readable)', () => {
  it('decodes as undici’s body.text() does: chunks joined, a UTF-8 BOM skipped', async () => {
    const dispatcher = await serve((res) => {
      res.writeHead(200);
      res.write(Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0xe2]));
      setTimeout(() => res.end(Buffer.from([0x82, 0xac, 0x7d])), 10);
    });
    const res = await collectBody(dispatcher, RAW_POST, undefined, undefined);
    expect(res.statusCode).toBe(200);
    expect(res.text).toBe('{€}');
  });

  it('an aborted signal aborts the request with its reason', async () => {
    const dispatcher = await serve(() => undefined); // never answers
    const controller = new AbortController();
    const reason = new Error('caller left');
    setTimeout(() => controller.abort(reason), 20);
    await expect(collectBody(dispatcher, RAW_POST, controller.signal, undefined)).rejects.toBe(reason);
  });
});
