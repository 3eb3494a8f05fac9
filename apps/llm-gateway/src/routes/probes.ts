/** GET /healthz (the process is alive) and GET /readyz (config loaded, listening, not shutting down). */
import type { ServerResponse } from 'node:http';
import type { GatewayContext } from '../context.js';
import { sendText } from '../http/respond.js';

export function handleHealthz(ctx: GatewayContext, res: ServerResponse): void {
  sendText(res, ctx.state, 200, 'application/json', '{"status":"ok"}', { 'cache-control': 'no-store' });
}

export function handleReadyz(ctx: GatewayContext, res: ServerResponse): void {
  if (ctx.state.ready) {
    sendText(res, ctx.state, 200, 'application/json', '{"status":"ready"}', { 'cache-control': 'no-store' });
  } else {
    const reason = ctx.state.draining ? 'shutting_down' : 'starting';
    sendText(res, ctx.state, 503, 'application/json', `{"status":"${reason}"}`, { 'cache-control': 'no-store' });
  }
}
