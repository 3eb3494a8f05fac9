/**
 * Reads a request body up to a byte limit. Over the limit it stops reading at
 * once (a declared Content-Length is checked before any byte is read) so a huge
 * or endless body cannot fill memory; the caller answers 413 and closes (after
 * reading and discarding a bounded amount more: see linger.ts).
 */
import type { IncomingMessage } from 'node:http';

export type BodyErrorKind = 'too_large' | 'aborted';

export class BodyError extends Error {
  override readonly name = 'BodyError';
  constructor(readonly kind: BodyErrorKind, message: string) {
    super(message);
  }
}

export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    return Promise.reject(new BodyError('too_large', `The request body (${declared} bytes) exceeds the ${limit}-byte limit.`));
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        settled = true;
        cleanup();
        req.pause();
        reject(new BodyError('too_large', `The request body exceeds the ${limit}-byte limit.`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      if (settled) return;
      settled = true;
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onClose = (): void => {
      if (settled) return;
      settled = true;
      cleanup();
      reject(new BodyError('aborted', 'The client closed the connection before sending the whole body.'));
    };
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onClose);
      req.off('close', onClose);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onClose);
    req.on('close', onClose);
  });
}
