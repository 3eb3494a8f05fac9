import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { drained } from './respond.js';

class FakeResponse extends EventEmitter {
  destroyed = false;
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

describe('drained', () => {
  it('resolves on drain and leaves the response alone', async () => {
    const res = new FakeResponse();
    const waiting = drained(res as unknown as ServerResponse, 1_000);
    res.emit('drain');
    await waiting;
    expect(res.destroyed).toBe(false);
    expect(res.listenerCount('drain') + res.listenerCount('close')).toBe(0);
  });

  it('resolves when the client goes away', async () => {
    const res = new FakeResponse();
    const waiting = drained(res as unknown as ServerResponse, 1_000);
    res.emit('close');
    await waiting;
    expect(res.listenerCount('drain')).toBe(0);
  });

  it('cuts a client that stops reading', async () => {
    const res = new FakeResponse();
    await drained(res as unknown as ServerResponse, 20);
    expect(res.destroyed).toBe(true);
  });
});
