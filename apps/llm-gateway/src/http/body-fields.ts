/**
 * Typed reads of a request body's top-level fields for the decoders of other
 * dialects (dialects/anthropic/decode-messages.ts, dialects/responses/decode-responses.ts):
 * absent and `null` are "not given" (undefined); a value of another JSON type
 * is refused with the field named (http/refusal.ts).
 */
import { wrongType } from './refusal.js';

type Json = Record<string, unknown>;

export function booleanField(body: Json, field: string): boolean | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw wrongType(field, 'a boolean', value);
  return value;
}

/** A finite number (a whole one when `integer`). */
export function numberField(body: Json, field: string, integer = false): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    throw wrongType(field, integer ? 'a whole number' : 'a number', value);
  }
  return value;
}

export function stringField(body: Json, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw wrongType(field, 'a string', value);
  return value;
}
