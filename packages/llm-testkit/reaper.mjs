/**
 * The reaper: ends what a test started when the test process dies without
 * cleaning up (a runner killed with SIGKILL, an aborted turbo run, Ctrl-C).
 *
 * The test process spawns it in a process group of its own (so a signal to the
 * runner's group does not reach it) with a pipe on its standard input, and
 * never writes to that pipe. The kernel closes the pipe when the test process
 * exits, however it exits: that end-of-file is the signal to act.
 *
 *   node reaper.mjs '{"killGroup": 1234, "whileAlive": 1234, "cleanup": [["rm", "-rf", "/tmp/x"]]}'
 *
 * - killGroup: SIGKILL to that process group (a gateway spawned as a group
 *   leader, with pnpm, turbo or anything else it started);
 * - cleanup: commands run one after another (e.g. `pg_ctl stop -m immediate`
 *   for a daemonised PostgreSQL, then removing its folder), each bounded;
 * - whileAlive: the reaper leaves quietly once that pid is gone, so it never
 *   outlives what it watches and never signals a recycled pid.
 *
 * Plain JavaScript, not TypeScript: it runs under `node` directly, from the
 * sources as from the build.
 */
import { spawnSync } from 'node:child_process';

const job = JSON.parse(process.argv[2] ?? '{}');
const CLEANUP_TIMEOUT_MS = 20_000; // one cleanup command at most
const POLL_MS = 500; // how often whileAlive is checked

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

function reap() {
  if (Number.isInteger(job.killGroup) && job.killGroup > 1) {
    try {
      process.kill(-job.killGroup, 'SIGKILL');
    } catch {
      // the group is gone already
    }
  }
  for (const [file, ...args] of job.cleanup ?? []) {
    spawnSync(file, args, { stdio: 'ignore', timeout: CLEANUP_TIMEOUT_MS });
  }
  process.exit(0);
}

process.stdin.on('end', reap);
process.stdin.on('error', reap);
process.stdin.resume();

if (Number.isInteger(job.whileAlive)) {
  setInterval(() => {
    if (!alive(job.whileAlive)) process.exit(0);
  }, POLL_MS);
}
