/**
 * What the usage e2e suites ask a gateway process: chat requests to the
 * failover alias, admin reads of the usage API, one metric, and polling.
 */
import type { GatewayProcess, Json } from './harness.js';

export const ADMIN = 'admin-key-e2e-usage';
export const ALIAS = 'mana/long-form';

export async function chat(gw: GatewayProcess, body: Record<string, unknown>, model = ALIAS): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
}

/** One admin API call with `key` (the admin key these tests start gateways with, by default): status and JSON body. */
export async function admin(gw: GatewayProcess, path: string, method = 'GET', body?: unknown, key = ADMIN): Promise<{ status: number; body: Json }> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${gw.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

/** Polls until the stored requests reach `count` (the writer flushes every second). */
export async function storedRequests(gw: GatewayProcess, count: number, timeoutMs = 8_000): Promise<Json[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { status, body } = await admin(gw, '/admin/usage/requests?limit=100');
    if (status === 200 && body.data.length >= count) return body.data;
    if (Date.now() > deadline) throw new Error(`expected ${count} stored requests, have ${status === 200 ? body.data.length : status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Polls until the request with this X-Request-Id is stored (among the newest 100). */
export async function storedRequest(gw: GatewayProcess, requestId: string | null, timeoutMs = 8_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { status, body } = await admin(gw, '/admin/usage/requests?limit=100');
    const found = status === 200 ? body.data.find((r: Json) => r.request_id === requestId) : undefined;
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`request ${requestId} not stored (${status})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function metric(gw: GatewayProcess, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(name + ' ') || l.startsWith(name + '{') && l.slice(0, l.lastIndexOf(' ')) === name);
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}
