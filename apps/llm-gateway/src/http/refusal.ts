/**
 * A Messages request the decoder cannot route: thrown from inside the walk
 * over messages and blocks (decode-content.ts, decode-messages.ts) and caught
 * once, where it becomes the 400 the client gets (in Anthropic's error shape,
 * anthropic-errors.ts). Only for refusals: a request that decodes throws nothing.
 */
import type { GatewayErrorCode } from '../http/errors.js';
import { typeName } from '../http/validate-chat.js';

export type RefusalCode = Extract<GatewayErrorCode, 'invalid_request' | 'invalid_type' | 'invalid_model' | 'missing_messages' | 'unsupported_request'>;

export class Refusal extends Error {
  constructor(
    readonly code: RefusalCode,
    message: string,
    readonly param: string | undefined,
  ) {
    super(message);
  }
}

/** `param` is not of the JSON type `wanted` describes (`a string`, `an array of blocks`). */
export function wrongType(param: string, wanted: string, value: unknown): Refusal {
  return new Refusal('invalid_type', `${param} must be ${wanted}, got ${typeName(value)}.`, param);
}
