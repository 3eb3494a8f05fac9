/**
 * The server's dispatch around the route table: the auth step, the computed
 * 405, and the error funnel — a real gateway context (bundled config, no
 * upstream called) served through a table with routes that fail on purpose.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG_PATH, DEFAULT_MAX_BODY_BYTES } from './cli.js';
import { startGateway, type Gateway } from './gateway.js';
import { createLogger } from './logging.js';
import type { Dialect } from './dialects/dialect.js';
import { RouteTable } from './http/route-table.js';
import { bindGatewayServer, createGatewayServer } from './server.js';

/** An API with an error shape and a request-id header of its own. */
const SHAPED: Dialect = { requestIdHeaders: ['request-id'], encodeError: (error) => JSON.stringify({ shaped: error.code }) };

let gateway: Gateway;
let server: Server;
let url: string;

beforeAll(async () => {
  gateway = await startGateway(
    {
      configPath: DEFAULT_CONFIG_PATH,
      host: '127.0.0.1',
      port: 0,
      apiKeys: ['client-key'],
      adminKey: 'admin-key',
      logLevel: 'silent',
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      shutdownGraceMs: 1_000,
      requestTimeoutMs: 30_000,
      insecure: false,
      authRequired: false,
      corsOrigins: [],
      recordUsage: false,
      dataDir: 'data',
      databaseUrl: undefined,
      usageRetentionMs: undefined,
      replicaName: undefined,
      tracing: undefined,
    },
    { logger: createLogger('silent').logger, env: { OLLAMA_URL: 'http://127.0.0.1:9' }, defaultMetrics: false },
  );
  const table = new RouteTable([
    { method: 'GET', path: '/throws', auth: 'none', handler: () => { throw new Error('boom'); } },
    { method: 'GET', path: '/rejects', auth: 'none', handler: async () => { await Promise.reject(new TypeError('late boom')); } },
    { method: 'GET', path: '/throws-in-dialect', auth: 'api_key', dialect: SHAPED, handler: () => { throw new Error('boom'); } },
    { method: ['GET', 'DELETE'], path: '/keyed', auth: 'api_key', handler: (call) => { call.res.end('in'); } },
    { method: 'POST', path: '/admin/thing', auth: 'admin', handler: (call) => { call.res.end('admin in'); } },
  ]);
  server = createGatewayServer(gateway.context, 30_000, table);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await gateway.shutdown(1_000);
});

describe('dispatch through the route table', () => {
  it('a handler that throws or rejects → 500 internal_error with X-Request-Id, and the server keeps serving', async () => {
    for (const path of ['/throws', '/rejects']) {
      const res = await fetch(`${url}${path}`, { headers: { 'x-request-id': `req-${path.slice(1)}` } });
      expect(res.status).toBe(500);
      expect(res.headers.get('x-request-id')).toBe(`req-${path.slice(1)}`);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('internal_error');
      expect(body.error.message).not.toContain('boom');
    }
    const after = await fetch(`${url}/keyed`, { headers: { authorization: 'Bearer client-key' } });
    expect(await after.text()).toBe('in');
  });

  it("a route's dialect shapes every error it answers, the auth step's refusal and the funnel's 500, with its request-id header", async () => {
    const refused = await fetch(`${url}/throws-in-dialect`, { headers: { 'x-request-id': 'shaped-401' } });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ shaped: 'missing_api_key' });
    expect(refused.headers.get('request-id')).toBe('shaped-401');
    const failed = await fetch(`${url}/throws-in-dialect`, { headers: { authorization: 'Bearer client-key', 'x-request-id': 'shaped-500' } });
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ shaped: 'internal_error' });
    expect([failed.headers.get('x-request-id'), failed.headers.get('request-id')]).toEqual(['shaped-500', 'shaped-500']);
  });

  it('the auth step runs before the handler: 401 without a key, the handler with one', async () => {
    const none = await fetch(`${url}/keyed`);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe('missing_api_key');
    const admin = await fetch(`${url}/admin/thing`, { method: 'POST', headers: { authorization: 'Bearer client-key' } });
    expect(admin.status).toBe(403);
    expect(((await admin.json()) as { error: { code: string } }).error.code).toBe('invalid_admin_key');
    const ok = await fetch(`${url}/admin/thing`, { method: 'POST', headers: { authorization: 'Bearer admin-key' } });
    expect(await ok.text()).toBe('admin in');
  });

  it('405 carries Allow computed from the table; 405 and 404 come before auth', async () => {
    const res = await fetch(`${url}/keyed`, { method: 'PUT' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, DELETE');
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('method_not_allowed');
    const missing = await fetch(`${url}/v1/models`);
    expect(missing.status).toBe(404);
    // Generated (the client sent none): a UUID, so the 404 can be found in the log.
    expect(missing.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const echoed = await fetch(`${url}/v1/models`, { headers: { 'x-request-id': 'trace-404.a:b/c' } });
    expect(echoed.status).toBe(404);
    expect(echoed.headers.get('x-request-id')).toBe('trace-404.a:b/c');
  });
});

describe('a server bound before the gateway is built', () => {
  it('closes each connection it accepts, unanswered, until it serves; then the routes answer', async () => {
    const bound = await bindGatewayServer(0, '127.0.0.1', 30_000);
    const healthz = `http://127.0.0.1:${bound.address.port}/healthz`;
    try {
      // Closed at once: a server that answered nothing would hang here until the timeout.
      await expect(fetch(healthz, { signal: AbortSignal.timeout(5_000) })).rejects.toThrow('fetch failed');
      bound.serve(gateway.context);
      const res = await fetch(healthz);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ok' });
    } finally {
      bound.server.closeAllConnections();
      await bound.close();
    }
  });
});
