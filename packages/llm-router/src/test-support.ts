/**
 * Setup shared by the router's socket tests (not exported from index.ts and not
 * built: tsconfig.build.json excludes it, as it imports vitest and the testkit).
 */
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
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
