import { ESLintUtils } from '@typescript-eslint/utils';

/** Extra `meta.docs` fields our rules declare. */
export interface LlmRuleDocs {
  /** Whether the rule is on in the `recommended` config. */
  recommended?: boolean;
}

/**
 * Builds a rule whose `meta.docs.url` points at its page in this package's
 * `docs/rules/` (a file URL: the package is not published to a public registry,
 * and editors open the link from the lint message).
 */
export const createRule = ESLintUtils.RuleCreator<LlmRuleDocs>(
  (name) => new URL(`../docs/rules/${name}.md`, import.meta.url).href,
);
