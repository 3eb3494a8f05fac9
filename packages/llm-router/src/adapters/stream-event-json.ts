import { isPlainObject } from '../plain-object.js';

/**
 * The JSON object one upstream stream event carries, or undefined when it
 * carries none (not JSON, or not an object). A decoder skips such an event and
 * counts it (`StreamDecoder.skippedEvents`) rather than end the stream: one
 * garbled event in an otherwise healthy answer must not cost the client the
 * rest of it (Portkey and a plain SDK client skip it too). A stream that never
 * carries a parsable event still ends without a delta or a finish, so it fails
 * over, or ends with an error, as any empty or cut stream does.
 */
export function streamEventObject(data: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return undefined;
  }
  return isPlainObject(value) ? value : undefined;
}
