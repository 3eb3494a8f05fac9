/**
 * Starts the reaper (`../reaper.mjs`): a small watchdog process that ends what
 * a test started — a gateway's process group, a daemonised PostgreSQL — when
 * the test process dies without cleaning up. See reaper.mjs for how it knows.
 */
import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

/** From src/ and from dist/ alike: the file sits at the package's root. */
const REAPER_PATH = fileURLToPath(new URL('../reaper.mjs', import.meta.url));

export interface ReaperJob {
  /** SIGKILL to this process group (a child spawned with `detached: true` leads its own). */
  readonly killGroup?: number;
  /** Commands run, in order, after the kill (each bounded to 20 s). */
  readonly cleanup?: readonly (readonly string[])[];
  /** The reaper leaves by itself once this pid is gone. */
  readonly whileAlive?: number;
}

export interface Reaper {
  /** The test cleaned up itself: the reaper leaves without doing anything. */
  dismiss(): void;
}

export function startReaper(job: ReaperJob): Reaper {
  const reaper = spawn(process.execPath, [REAPER_PATH, JSON.stringify(job)], {
    // Its own process group: a signal to the test runner's group must not take it along.
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  reaper.on('error', () => undefined); // no reaper is no worse than before; the test goes on
  // Neither the process nor its lifeline keeps the test process running.
  reaper.unref();
  (reaper.stdin as Socket | null)?.unref();
  return {
    dismiss() {
      if (reaper.exitCode === null && reaper.signalCode === null) reaper.kill('SIGKILL');
    },
  };
}
