import { ESLintUtils } from '@typescript-eslint/utils';

/** Extra `meta.docs` fields our rules declare. */
export interface LlmRuleDocs {
  /** Whether the rule is on in the `recommended` config. */
  recommended?: boolean;
}

/** Builds a rule whose `meta.docs.url` points at its markdown page in this package. */
export const createRule = ESLintUtils.RuleCreator<LlmRuleDocs>(
  (name) => `https://github.com/mana-llm/mana-llm/blob/main/packages/eslint-plugin-llm/docs/rules/${name}.md`,
);
