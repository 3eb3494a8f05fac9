import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { ClientAbort } from './client-abort.js';

function fakeResponse(): EventEmitter & { writableFinished: boolean } {
  return Object.assign(new EventEmitter(), { writableFinished: false });
}

describe('ClientAbort', () => {
  it('aborts once when the response closes before it finished, calling function and object listeners', () => {
    const res = fakeResponse();
    const abort = new ClientAbort(res as unknown as ServerResponse);
    const fn = vi.fn();
    const obj = { handleEvent: vi.fn() };
    const removed = vi.fn();
    abort.addEventListener('abort', fn, { once: true });
    abort.addEventListener('abort', obj);
    abort.addEventListener('abort', removed);
    abort.removeEventListener('abort', removed);
    expect(abort.aborted).toBe(false);
    res.emit('close');
    res.emit('close');
    expect(abort.aborted).toBe(true);
    expect(fn).toHaveBeenCalledTimes(1);
    expect(obj.handleEvent).toHaveBeenCalledTimes(1);
    expect(removed).not.toHaveBeenCalled();
    expect(() => abort.throwIfAborted()).toThrow(/client closed/);
  });

  it('does not abort when the response finished before closing', () => {
    const res = fakeResponse();
    const abort = new ClientAbort(res as unknown as ServerResponse);
    const fn = vi.fn();
    abort.addEventListener('abort', fn);
    res.writableFinished = true;
    res.emit('close');
    expect(abort.aborted).toBe(false);
    expect(fn).not.toHaveBeenCalled();
  });
});
