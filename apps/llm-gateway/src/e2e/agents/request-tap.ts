/**
 * A loopback pass-through in front of the gateway that keeps what the client
 * sent and the status it got back: the only way to see a CLI's own requests
 * (the fakes see what the gateway made of them). Streams pass through as they
 * come; nothing is changed.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TappedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  /** The status the gateway answered; undefined while it has not. */
  status: number | undefined;
}

export interface RequestTap {
  readonly url: string;
  readonly requests: readonly TappedRequest[];
  close(): Promise<void>;
}

export async function startRequestTap(target: string): Promise<RequestTap> {
  const upstream = new URL(target);
  const requests: TappedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const tapped: TappedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body: body.toString('utf8'), status: undefined };
      requests.push(tapped);
      const out = http.request(
        { host: upstream.hostname, port: upstream.port, method: tapped.method, path: tapped.path, headers: { ...req.headers, host: upstream.host } },
        (answer) => {
          tapped.status = answer.statusCode;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      out.on('error', () => res.destroy());
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
