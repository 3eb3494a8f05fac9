/**
 * The `model` an answer names in a dialect that echoes it (a Messages
 * message, a Responses response): what the client asked for (the alias),
 * else the default alias that applied, else the target that answered.
 */
import type { RequestOutcome } from '@mana/llm-router';
import type { DecodedRequest } from './codec.js';

export function modelOf(request: DecodedRequest, outcome: RequestOutcome): string {
  return request.model ?? outcome.alias ?? outcome.target ?? '';
}
