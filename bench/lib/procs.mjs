// Starting and stopping the processes a benchmark run needs: the fake
// upstream, Portkey (bound to loopback) and our gateway, each its own process.
import { fork, spawn } from 'node:child_process';
import path from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const here = (file) => fileURLToPath(new URL(file, import.meta.url));

/** A loopback port free right now (nothing listens on it once this resolves). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Resident set size of a process in MB (Linux /proc). */
export function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  return kb / 1024;
}

/** CPU time of a process (all threads), or with `thread` of one of its threads (the main thread's id is the pid), in ms (Linux /proc; clock ticks are 10 ms). */
export function cpuMs(pid, thread) {
  const file = thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`;
  const fields = readFileSync(file, 'utf8').split(') ')[1].split(' ');
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 }; // fields 14 and 15 of stat(5)
}

/**
 * CPU time of a process, all its threads, in ns, from the scheduler's own
 * count (`/proc/PID/task/TID/schedstat`, first field): exact, where `stat`'s
 * clock ticks are 10 ms. Threads that ended are not counted; read it around a
 * block whose threads live through it (a gateway's do).
 */
export function cpuNs(pid) {
  let total = 0n;
  for (const thread of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += BigInt(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return total;
}

/** CPU time of each thread of a process, in ms, by thread id. */
export function threadCpuMs(pid) {
  const byThread = new Map();
  for (const thread of readdirSync(`/proc/${pid}/task`)) {
    try {
      const { user, system } = cpuMs(pid, thread);
      byThread.set(Number(thread), user + system);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return byThread;
}

/** Polls `probe` until it returns true or the deadline passes. */
export async function waitFor(probe, { timeoutMs = 20_000, intervalMs = 100, what = 'condition', child } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child && (child.exitCode !== null || child.signalCode !== null)) {
      throw new Error(`process exited (${child.exitCode ?? child.signalCode}) while waiting for ${what}`);
    }
    try {
      if (await probe()) return;
    } catch {
      // not ready yet
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
export function stopProcess(child, graceMs = 5_000) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function keepTail(child, limit = 8_000) {
  let tail = '';
  const add = (part) => {
    tail = (tail + part.toString()).slice(-limit);
  };
  child.stdout?.on('data', add);
  child.stderr?.on('data', add);
  return () => tail;
}

/** The benchmark's fake upstream (bench/lib/upstream.mjs) in its own process. */
export async function startUpstream() {
  const child = fork(here('./upstream.mjs'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const port = await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`upstream exited with ${code}`)));
    child.on('message', (message) => message?.ready && resolve(message.port));
  });
  const ask = (cmd, key) =>
    new Promise((resolve) => {
      const onMessage = (message) => {
        if (message?.[key] !== undefined) {
          child.off('message', onMessage);
          resolve(message[key]);
        }
      };
      child.on('message', onMessage);
      child.send({ cmd });
    });
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    release: () => ask('release', 'released'),
    hang: () => ask('hang', 'hanging'),
    stats: () => ask('stats', 'stats'),
    stop: () => stopProcess(child),
  };
}

/** The tracing rows' OTLP/HTTP receiver (bench/lib/collector.mjs) in its own process. */
export async function startCollector() {
  const child = fork(here('./collector.mjs'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const url = await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`collector exited with ${code}`)));
    child.on('message', (message) => message?.ready && resolve(message.url));
  });
  return {
    url,
    pid: child.pid,
    spanCount: () =>
      new Promise((resolve) => {
        const onMessage = (message) => {
          if (message?.count === undefined) return;
          child.off('message', onMessage);
          resolve(message.count);
        };
        child.on('message', onMessage);
        child.send({ cmd: 'count' });
      }),
    stop: () => stopProcess(child),
  };
}

/** The minimal Node proxy (bench/lib/floor-proxy.mjs) in front of `upstream`. */
export async function startFloorProxy(upstream, execArgv = []) {
  const child = fork(here('./floor-proxy.mjs'), [], {
    execArgv,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_FLOOR_UPSTREAM: upstream.url },
  });
  const port = await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`floor proxy exited with ${code}`)));
    child.on('message', (message) => message?.ready && resolve(message.port));
  });
  return { port, url: `http://127.0.0.1:${port}`, pid: child.pid, stop: () => stopProcess(child) };
}

/** @portkey-ai/gateway 1.15.2, headless, on 127.0.0.1 (see portkey-loopback.mjs). */
export async function startPortkey() {
  const port = await freePort();
  const child = spawn(process.execPath, [here('./portkey-loopback.mjs'), `--port=${port}`, '--headless'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  const tail = keepTail(child);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(async () => (await (await fetch(url)).text()).includes('AI Gateway says hey!'), {
      what: 'Portkey readiness',
      child,
    });
  } catch (error) {
    await stopProcess(child);
    throw new Error(`${error.message}\n${tail()}`);
  }
  return { port, url, pid: child.pid, child, tail, stop: () => stopProcess(child) };
}

export const gatewayMain = `${repoRoot}apps/llm-gateway/dist/main.js`;

/** The environment without OpenTelemetry's variables (OTEL_*). */
function withoutOtel(env) {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('OTEL_')));
}

/** Our gateway (built) with a config file, on a free loopback port. */
export async function startManaGateway({ configPath, env = {}, args = [], logLevel = 'info', nodeArgs = [], main = gatewayMain }) {
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, main, '--config', configPath, '--port', String(port), ...args], {
    // Request logs go to /dev/null: the gateway still formats and writes them
    // (that cost is measured), but nobody here spends CPU reading them.
    stdio: ['ignore', 'ignore', 'pipe'],
    // Usage records go next to the generated config (a temp folder), not into the checkout. Tracing is
    // on only where the run asks for it (`env`): an OTEL_* variable of the shell would trace every gateway.
    env: { ...withoutOtel(process.env), LOG_LEVEL: logLevel, HOST: '127.0.0.1', MANA_LLM_DATA_DIR: path.join(path.dirname(configPath), 'data'), ...env },
  });
  const tail = keepTail(child);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, { what: 'gateway /readyz', child });
  } catch (error) {
    await stopProcess(child);
    throw new Error(`${error.message}\n${tail()}`);
  }
  return { port, url, pid: child.pid, child, tail, stop: () => stopProcess(child, 8_000) };
}

/**
 * The saturation scenario's fake GPU boxes and cloud (bench/lib/gpu-boxes.mjs) in a process of their own:
 * `start(options)` starts one (the testkit's startGpuBox options) and resolves with `{ url, stats(), close() }`.
 */
export async function startGpuBoxes() {
  const child = fork(here('./gpu-boxes.mjs'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`GPU boxes exited with ${code}`)));
    child.on('message', (message) => message?.ready && resolve());
  });
  let next = 0;
  const ask = (message, replyKey) =>
    new Promise((resolve) => {
      const onMessage = (reply) => {
        if (reply?.[replyKey] !== message.id) return;
        child.off('message', onMessage);
        resolve(reply);
      };
      child.on('message', onMessage);
      child.send(message);
    });
  return {
    async start(options) {
      const id = next++;
      const { url } = await ask({ cmd: 'start', id, options }, 'started');
      return {
        url,
        stats: async () => (await ask({ cmd: 'stats', id }, 'statsOf')).stats,
        close: async () => void (await ask({ cmd: 'close', id }, 'closed')),
      };
    },
    stop: () => stopProcess(child),
  };
}
