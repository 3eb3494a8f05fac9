// Runs one load job (see load.mjs) in its own process, so that the load never
// shares an event loop with whoever measures; resolves with its result line.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export function runLoad(job) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(new URL('./load.mjs', import.meta.url)), JSON.stringify(job)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (part) => {
      out += part;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`load generator exited with ${code}`));
      else resolve(JSON.parse(out.trim().split('\n').pop()));
    });
  });
}
