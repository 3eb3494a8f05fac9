import { connect, createServer } from 'node:net';

// Privileged ports (< 1024) are never handed out for `listen(0)`, so unlike a freed ephemeral
// port, another test cannot start listening there between our check and its use.
const CANDIDATES = [1, 9, 13, 17, 19, 37, 47, 61, 79, 87, 97, 101, 103, 107, 109, 111];
let cursor = 0;

function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
  });
}

/** A loopback port with nothing listening: connecting gives ECONNREFUSED right away. */
export async function refusingPort(): Promise<number> {
  for (let tries = 0; tries < CANDIDATES.length; tries++) {
    const port = CANDIDATES[cursor++ % CANDIDATES.length]!;
    if (await refuses(port)) return port;
  }
  return freedEphemeralPort();
}

/**
 * A loopback port just released by the OS (a small race, but rare): the fallback when every
 * privileged candidate is taken, and a free port for a server a test starts (PostgreSQL).
 */
export function freedEphemeralPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = address !== null && typeof address === 'object' ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
