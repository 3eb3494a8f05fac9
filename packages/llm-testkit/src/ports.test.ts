import { request } from 'node:http';
import { expect, test } from 'vitest';
import { refusingPort } from './ports.js';

test('refusingPort gives a loopback port where connections are refused', async () => {
  const port = await refusingPort();
  const error = await new Promise<NodeJS.ErrnoException>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/v1/models' }, () => reject(new Error('connected')));
    req.on('error', resolve);
    req.end();
  });
  expect(error.code).toBe('ECONNREFUSED');
});
