/** GET /healthz (the process is alive) and GET /readyz (config loaded, listening, not shutting down). */
import type { Call } from '../call.js';

const NO_STORE = { 'cache-control': 'no-store' };

export function handleHealthz(call: Call): void {
  call.text(200, 'application/json', '{"status":"ok"}', NO_STORE);
}

export function handleReadyz(call: Call): void {
  const state = call.ctx.state;
  if (state.ready) {
    call.text(200, 'application/json', '{"status":"ready"}', NO_STORE);
  } else {
    const reason = state.draining ? 'shutting_down' : 'starting';
    call.text(503, 'application/json', `{"status":"${reason}"}`, NO_STORE);
  }
}
