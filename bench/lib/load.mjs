// Load generator, run as a separate process so that it never shares an event
// loop with the process under test. Reads one JSON job from argv[2], prints one
// JSON result line on stdout.
//
//   {mode:'max', url, headers, body, connections, durationS}
//       autocannon, closed loop: the highest request rate the target sustains.
//   {mode:'rate', url, headers, body, rate, durationS, maxSockets}
//       open loop at a fixed rate; latency measured per request with
//       performance.now() (autocannon's histogram rounds to whole ms, too coarse
//       for sub-millisecond medians).
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { percentile } from './stats.mjs';

const job = JSON.parse(process.argv[2]);

async function maxThroughput() {
  const result = await autocannon({
    url: job.url,
    method: 'POST',
    headers: { ...job.headers, 'content-type': 'application/json' },
    body: job.body,
    connections: job.connections,
    duration: job.durationS,
    pipelining: 1,
  });
  return {
    requestsPerSec: result.requests.average,
    total: result.requests.total,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

function fixedRate() {
  const { hostname, port, pathname } = new URL(job.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.maxSockets ?? 128 });
  const payload = Buffer.from(job.body);
  const headers = { ...job.headers, 'content-type': 'application/json', 'content-length': payload.length };
  const total = Math.round(job.rate * job.durationS);
  const intervalMs = 1_000 / job.rate;
  const latencies = [];
  let sent = 0;
  let done = 0;
  let non2xx = 0;
  let errors = 0;
  return new Promise((resolve) => {
    const started = performance.now();
    const finish = () => {
      const elapsedS = (performance.now() - started) / 1_000;
      agent.destroy();
      resolve({
        rate: job.rate,
        sent,
        achievedRate: done / elapsedS,
        latencyP50Ms: percentile(latencies, 50),
        latencyP99Ms: percentile(latencies, 99),
        non2xx,
        errors,
      });
    };
    const one = () => {
      sent += 1;
      const t0 = performance.now();
      const req = http.request({ agent, hostname, port, path: pathname, method: 'POST', headers }, (res) => {
        res.resume();
        res.on('end', () => {
          latencies.push(performance.now() - t0);
          if (res.statusCode !== 200) non2xx += 1;
          done += 1;
          if (done === total) finish();
        });
      });
      req.on('error', () => {
        errors += 1;
        done += 1;
        if (done === total) finish();
      });
      req.end(payload);
    };
    const tick = () => {
      const due = Math.min(total, Math.floor((performance.now() - started) / intervalMs) + 1);
      while (sent < due) one();
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
}

const result = job.mode === 'max' ? await maxThroughput() : await fixedRate();
process.stdout.write(`${JSON.stringify(result)}\n`);
