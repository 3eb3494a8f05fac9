#!/usr/bin/env node
/**
 * The process entry point: signal handlers first, then everything else.
 *
 * Loading the gateway's modules takes a few hundred milliseconds, and until a
 * handler exists a signal takes its default action: SIGHUP (a service
 * manager's reload) would kill the process with exit 129. So this file
 * imports nothing statically; it catches SIGHUP/SIGTERM/SIGINT at once, holds
 * what arrives, and hands it to the gateway once that can act on it (a SIGHUP
 * before the config is loaded is then logged and ignored: the config being
 * loaded is read at that point anyway).
 */
type Handler = (signal: NodeJS.Signals) => void;

const held: NodeJS.Signals[] = []; // at most one of each: a repeated signal says nothing new
let deliver: Handler | undefined;

for (const signal of ['SIGHUP', 'SIGTERM', 'SIGINT'] as const) {
  process.on(signal, (received: NodeJS.Signals) => {
    if (deliver !== undefined) deliver(received);
    else if (!held.includes(received)) held.push(received);
  });
}

const { runGateway } = await import('./run-gateway.js');
await runGateway({
  deliverTo(handler) {
    deliver = handler;
    for (const signal of held.splice(0)) handler(signal);
  },
});
