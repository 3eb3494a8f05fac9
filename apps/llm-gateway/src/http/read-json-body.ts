/**
 * The one reader of JSON request bodies, for every route that takes one
 * (chat completions, embeddings, the admin and LiteLLM writes): at most
 * `limit` bytes (read-body.ts), valid UTF-8, nested at most MAX_JSON_DEPTH
 * levels — checked on the text before `JSON.parse` (json-depth.ts), so a
 * deeply nested body never reaches code that recurses over the value (the YAML
 * edit, the merge patch, JSON.stringify) — then parsed. Each refusal is the
 * error the client gets; the route decides only how to send it.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { gatewayError, type GatewayError } from './errors.js';
import { MAX_JSON_DEPTH, scanJsonText, type JsonTextScan } from './json-depth.js';
import { BodyError, readBody } from './read-body.js';

export type JsonBody =
  /** The parsed body, its text and where its top-level `model` is. */
  | { readonly kind: 'json'; readonly text: string; readonly value: unknown; readonly scan: JsonTextScan }
  /** Over the byte limit: answer, then close (linger.ts), since the rest was not read. */
  | { readonly kind: 'too_large'; readonly error: GatewayError }
  /** The client went away while sending it: nobody to answer. */
  | { readonly kind: 'aborted' }
  /** Not UTF-8, too deep or not JSON: a 400. */
  | { readonly kind: 'refused'; readonly error: GatewayError };

export async function readJsonBody(req: IncomingMessage, limit: number): Promise<JsonBody> {
  let raw: Buffer;
  try {
    raw = await readBody(req, limit);
  } catch (error) {
    if (error instanceof BodyError && error.kind === 'too_large') {
      return { kind: 'too_large', error: gatewayError('request_too_large', `${error.message} Send a smaller request.`) };
    }
    return { kind: 'aborted' };
  }
  // JSON text is UTF-8 (RFC 8259): a lossy decode would forward U+FFFD in place
  // of the client's bytes and answer as if nothing were wrong. isUtf8 is a
  // SIMD scan: ~60 ns for a small request, ~2 µs for 100 kB.
  if (!isUtf8(raw)) return { kind: 'refused', error: gatewayError('invalid_utf8', 'The request body is not valid UTF-8.') };
  const text = raw.toString('utf8');
  // Before parsing: V8 takes seconds over a body of deeply nested brackets (see json-depth.ts).
  const scan = scanJsonText(text, MAX_JSON_DEPTH);
  if (scan.tooDeep) return { kind: 'refused', error: gatewayError('invalid_request', `The request body nests deeper than ${MAX_JSON_DEPTH} levels.`) };
  try {
    return { kind: 'json', text, value: JSON.parse(text), scan };
  } catch {
    return { kind: 'refused', error: gatewayError('invalid_json', 'The request body is not valid JSON.') };
  }
}
