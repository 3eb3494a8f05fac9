/**
 * A large JSON body posted the way an abusive client would: its head, then
 * `count` list items of about 1 MB each, written with backpressure, then its
 * tail — and no more items once the gateway has answered (it is expected to
 * refuse early, without reading the rest).
 */
import { request as httpRequest } from 'node:http';

export interface BodyInPieces {
  readonly url: string;
  readonly headers: Record<string, string>;
  /** The JSON text before the list items (`{"input": [`). */
  readonly head: string;
  /** One list item's JSON text. */
  readonly item: string;
  readonly count: number;
  /** The JSON text after them (`]}`). */
  readonly tail: string;
}

/** The status and body text the gateway answered. */
export function postInPieces({ url, headers, head, item, count, tail }: BodyInPieces): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    // Writing after the gateway answered and closed may fail: that is the point, not an error.
    req.on('error', (e) => (answered ? undefined : reject(e)));
    req.on('response', () => (answered = true));
    req.write(head);
    let sent = 0;
    const more = (): void => {
      while (!answered && sent < count && !req.destroyed) {
        sent++;
        if (!req.write(`${sent > 1 ? ',' : ''}${item}`)) return void req.once('drain', more);
      }
      if (!answered) req.end(tail);
    };
    more();
  });
}
