/**
 * GET /ui/…: the operator dashboard's static files, from memory (see
 * ../ui/static-folder.ts for why no request path reaches the file system).
 *
 * Every answer carries a strict Content-Security-Policy: scripts, styles and
 * data only from the gateway itself, no inline script or style, no framing.
 * Hashed assets (`assets/name-HASH.js`) are cached for a year; `index.html` is
 * revalidated on every load (ETag → 304), so a new build is picked up at once.
 */
import type { IncomingMessage } from 'node:http';
import type { Call } from '../call.js';
import { gatewayError } from '../http/errors.js';
import type { Headers } from '../http/respond.js';
import type { Route } from '../http/route-table.js';
import { pathOf } from '../http/url.js';
import { lookupStatic, type StaticFile } from '../ui/static-folder.js';

export const UI_PREFIX = '/ui/';

export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const IMMUTABLE = 'public, max-age=31536000, immutable'; // 1 year: the name changes with the content
const REVALIDATE = 'no-cache';

function securityHeaders(): Headers {
  return {
    'content-security-policy': DASHBOARD_CSP,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
  };
}

/** True when Accept-Encoding lists gzip (or `*`) without `q=0`. */
function acceptsGzip(req: IncomingMessage): boolean {
  const accept = req.headers['accept-encoding'];
  if (typeof accept !== 'string') return false;
  return accept.split(',').some((part) => {
    const [coding, ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    return (coding === 'gzip' || coding === '*') && (q === undefined || Number(q.slice(2)) > 0);
  });
}

/** A file as it is, or 304: written here, not through call.text (a Buffer body, gzip, no body for HEAD and 304). */
function sendFile(call: Call, path: string, file: StaticFile): void {
  const { ctx, req, res } = call;
  const headers = securityHeaders();
  headers['cache-control'] = path.startsWith('assets/') ? IMMUTABLE : REVALIDATE;
  headers.etag = file.etag;
  if (file.gzip !== undefined) headers.vary = 'accept-encoding';
  if (ctx.state.draining) headers.connection = 'close';
  if (req.headers['if-none-match'] === file.etag) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const gzip = file.gzip !== undefined && acceptsGzip(req);
  const body = gzip ? file.gzip! : file.body;
  headers['content-type'] = file.contentType;
  headers['content-length'] = body.length;
  if (gzip) headers['content-encoding'] = 'gzip';
  res.writeHead(200, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}

function handleUiFile(call: Call): void {
  const files = call.ctx.dashboard;
  if (files.kind === 'missing') return call.error(gatewayError('not_found', `The dashboard is not built (${files.reason}).`), securityHeaders());
  // The raw path, not the table's decoded param: an encoded `..` or slash must not become one.
  const found = lookupStatic(files.folder, pathOf(call.req.url).slice(UI_PREFIX.length));
  if (found === undefined) return call.error(gatewayError('not_found', 'No such dashboard file.'), securityHeaders());
  sendFile(call, found.path, found.file);
}

export const DASHBOARD_ROUTES: readonly Route[] = [
  {
    method: ['GET', 'HEAD'],
    path: '/ui',
    auth: 'none',
    handler: ({ ctx, res }) => {
      const headers: Headers = { location: UI_PREFIX, 'content-length': 0 };
      if (ctx.state.draining) headers.connection = 'close';
      res.writeHead(308, headers);
      res.end();
    },
  },
  // The files are public (the app signs in with the admin key it then sends to the JSON APIs).
  { method: ['GET', 'HEAD'], path: `${UI_PREFIX}:file`, auth: 'none', handler: handleUiFile },
];
