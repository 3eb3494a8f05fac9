import { Socket } from 'node:net';
import type { buildConnector } from 'undici';
import { describe, expect, it } from 'vitest';
import { preciseConnector } from './connect-timeout.js';

const OPTIONS: buildConnector.Options = { hostname: '127.0.0.1', protocol: 'http:', port: '9' };

/** A connector whose connection never completes (no network): only the timeout can end it. */
const neverConnects: buildConnector.connector = (_options, callback) => {
  const socket = new Socket();
  socket.on('error', (error) => callback(error, null));
  return socket as unknown as void;
};

function connect(connector: buildConnector.connector): Promise<{ error: Error | null; elapsed: number }> {
  const started = Date.now();
  return new Promise((resolve) => connector(OPTIONS, (...[error]) => resolve({ error, elapsed: Date.now() - started })));
}

describe('preciseConnector', () => {
  it('gives up a connection after connect_timeout, not at the next tick of a 1 s timer wheel', async () => {
    const { error, elapsed } = await connect(preciseConnector(100, neverConnects));
    expect(error).toMatchObject({ code: 'UND_ERR_CONNECT_TIMEOUT' });
    expect(elapsed).toBeGreaterThanOrEqual(95);
    expect(elapsed).toBeLessThan(500);
  });

  it('a connection that completes in time is handed over and its timer cleared', async () => {
    const socket = new Socket();
    const instant: buildConnector.connector = (_options, callback) => {
      setImmediate(() => callback(null, socket));
      return socket as unknown as void;
    };
    const { error } = await connect(preciseConnector(50, instant));
    expect(error).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(socket.destroyed).toBe(false);
  });

  it('a refused connection reports its own error', async () => {
    const refused: buildConnector.connector = (_options, callback) => {
      const socket = new Socket();
      setImmediate(() => callback(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }), null));
      return socket as unknown as void;
    };
    const { error } = await connect(preciseConnector(1_000, refused));
    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
  });
});
