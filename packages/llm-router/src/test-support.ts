/**
 * Setup shared by the router's socket tests (not exported from index.ts and not
 * built: tsconfig.build.json excludes it, as it imports vitest and the testkit).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { Pool } from 'undici';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { isRouterError, type RouterError } from './errors.js';
import type { Router } from './router.js';

export interface FakePair {
  /** Fake OpenAI-compatible upstreams `a` and `b`, started in `beforeAll`. */
  readonly a: FakeUpstream;
  readonly b: FakeUpstream;
  /** Registers the router a test started: it is closed after the test. Returns it. */
  use(router: Router): Router;
}

/**
 * Two loopback fakes for the whole file, closed after it; after each test the
 * test's router is closed and both fakes are reset (requests and behaviours).
 * Options are passed to both fakes, `names` gives each its own name.
 */
export function useFakePair(options: { names?: readonly [string, string] } = {}): FakePair {
  let router: Router | undefined;
  const pair = {
    use(next: Router): Router {
      router = next;
      return next;
    },
  } as FakePair & { a: FakeUpstream; b: FakeUpstream };
  beforeAll(async () => {
    const [nameA, nameB] = options.names ?? [];
    [pair.a, pair.b] = await Promise.all([
      startFakeOpenAI(nameA === undefined ? { host: '127.0.0.1' } : { host: '127.0.0.1', name: nameA }),
      startFakeOpenAI(nameB === undefined ? { host: '127.0.0.1' } : { host: '127.0.0.1', name: nameB }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([pair.a?.close(), pair.b?.close()]);
  });
  afterEach(async () => {
    await router?.close();
    router = undefined;
    pair.a?.reset();
    pair.b?.reset();
  });
  return pair;
}

/** The RouterError a promise rejects with (anything else is rethrown; fulfilment fails the test). */
export async function failure(promise: Promise<unknown>): Promise<RouterError> {
  try {
    await promise;
  } catch (error) {
    if (isRouterError(error)) return error;
    throw error;
  }
  throw new Error('expected a RouterError');
}

/** The request both dispatch-handler tests send: headers timeout off (the handlers own that clock). */
export const RAW_POST = { method: 'POST' as const, path: '/', body: '{}', headersTimeout: 0, bodyTimeout: 10_000 };

/**
 * A bare `node:http` server on 127.0.0.1 per test, for dispatch-handler tests
 * that need byte-level control the testkit does not offer; `serve()` starts it
 * and returns an undici Pool to it; both are torn down after each test.
 * The handler also gets a promise that settles when the client closes.
 */
export function useRawServer(): (handler: (res: ServerResponse, closed: Promise<void>) => void) => Promise<Pool> {
  let server: Server | undefined;
  let pool: Pool | undefined;
  afterEach(async () => {
    await pool?.destroy();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
    pool = undefined;
  });
  return async (handler) => {
    const current = createServer((req, res) => {
      req.resume();
      handler(res, new Promise((resolve) => res.on('close', () => resolve())));
    });
    server = current;
    await new Promise<void>((resolve) => current.listen(0, '127.0.0.1', resolve));
    pool = new Pool(`http://127.0.0.1:${(current.address() as AddressInfo).port}`);
    return pool;
  };
}
