/**
 * Compile-time checks, run by `pnpm typecheck`: importing the aliases from an app
 * type-checks, and each constant keeps its literal type (a plain `string` would
 * let any typo through).
 */
import { MANA_LLM, type ManaLlmAlias } from '@mana/llm-aliases';

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

export const longFormIsLiteral: Equals<typeof MANA_LLM.LONG_FORM, 'mana/long-form'> = true;
export const aliasesAreAUnion: Equals<
  ManaLlmAlias,
  'mana/fast-text' | 'mana/long-form' | 'mana/structured' | 'mana/reasoning' | 'mana/vision' | 'mana/embed'
> = true;
