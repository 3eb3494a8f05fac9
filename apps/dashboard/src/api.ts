/**
 * The gateway's JSON APIs as the dashboard calls them: same origin, the admin
 * key as a bearer token, errors turned into ApiError with the gateway's
 * stable `code` and `param`. Writes send `If-Match` with the version the form
 * was read at, so a change made underneath is a 412 the page can show.
 */
import { adminKey } from './session.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    readonly heldBy: readonly string[] = [],
  ) {
    super(message);
  }
}

/** A request that never reached the gateway, or an answer that is not its JSON. */
function unreachable(detail: string): ApiError {
  return new ApiError(0, 'unreachable', `The gateway did not answer (${detail}).`);
}

export interface Answer<T> {
  readonly body: T;
  /** The config version (ETag) the answer was read at, for admin resources. */
  readonly etag: string | null;
}

export interface RequestOptions {
  readonly method?: string;
  readonly body?: unknown;
  readonly ifMatch?: string | null;
  /** A key to try instead of the session's (signing in). */
  readonly key?: string;
  readonly signal?: AbortSignal;
}

export async function call<T>(path: string, options: RequestOptions = {}): Promise<Answer<T>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const key = options.key ?? adminKey();
  if (key !== null) headers.authorization = `Bearer ${key}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.ifMatch) headers['if-match'] = options.ifMatch;
  let response: Response;
  try {
    response = await fetch(path, {
      method: options.method ?? 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      cache: 'no-store',
      signal: options.signal,
    });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw unreachable((error as Error).message);
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw unreachable(`HTTP ${response.status} without a JSON body`);
  }
  if (!response.ok) {
    const e = (body as { error?: { code?: string; message?: string; param?: string | null; held_by?: string[] } }).error ?? {};
    throw new ApiError(response.status, e.code ?? 'error', e.message ?? `HTTP ${response.status}`, e.param ?? null, e.held_by ?? []);
  }
  return { body: body as T, etag: response.headers.get('etag') };
}

export async function get<T>(path: string, signal?: AbortSignal): Promise<T> {
  return (await call<T>(path, { signal })).body;
}

/** A query string from the defined values only. */
export function query(params: Record<string, string | number | boolean | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/** An alias or provider name in a path: each segment encoded, the slashes kept (the admin API wants them as they are). */
export function namePath(name: string): string {
  return name.split('/').map(encodeURIComponent).join('/');
}
