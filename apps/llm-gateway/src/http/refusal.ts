/**
 * A request a decoder of another dialect cannot route (Messages, Responses):
 * thrown from inside the walk over its messages, items and blocks
 * (dialects/anthropic/decode-*.ts, dialects/responses/decode-*.ts) and caught once, where it
 * becomes the 400 the client gets in its API's error shape. Only for
 * refusals: a request that decodes throws nothing.
 */
import type { GatewayErrorCode } from './errors.js';

export class Refusal extends Error {
  constructor(
    readonly code: GatewayErrorCode,
    message: string,
    readonly param: string | undefined,
  ) {
    super(message);
  }
}

/** `param` is not of the JSON type `wanted` describes (`a string`, `an array of blocks`). */
export function wrongType(param: string, wanted: string, value: unknown): Refusal {
  return new Refusal('invalid_type', `'${param}' must be ${wanted}, got ${typeName(value)}.`, param);
}

/** A JSON value's type as messages name it (`null`, `array`, `object`, …). */
export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
