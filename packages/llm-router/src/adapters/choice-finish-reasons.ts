import { isPlainObject } from '../plain-object.js';

const NONE: readonly string[] = [];

/** Each choice's `finish_reason` of an OpenAI-shaped answer or chunk (`stop`, `length`, …), in choice order. */
export function choiceFinishReasons(choices: unknown): readonly string[] {
  if (!Array.isArray(choices)) return NONE;
  const reasons: string[] = [];
  for (const choice of choices) if (isPlainObject(choice) && typeof choice.finish_reason === 'string') reasons.push(choice.finish_reason);
  return reasons;
}
