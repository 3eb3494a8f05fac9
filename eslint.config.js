// @ts-check
/**
 * Repository lint config (flat config: editors with the ESLint extension pick it
 * up with no extra setup). Two layers:
 *   1. typescript-eslint's recommended rules for TypeScript (not type-checked: fast);
 *   2. @mana/llm/no-raw-model-string everywhere: product code names MANA_LLM
 *      aliases, never provider models — except where provider models are the
 *      subject (the router, the fakes, the gateway's tests, the lint gate's tests).
 * Keep the rule ignores in step with ALLOW_LIST in scripts/lib/scan-llm-strings.mjs.
 * The plugin is loaded from its build (dist/): `pnpm lint` builds it first.
 */
import manaLlm from '@mana/eslint-plugin-llm';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(
    [
      '**/dist/**',
      '**/node_modules/**',
      '**/.turbo/**',
      '**/coverage/**',
      'bench/results/**',
      // Test data for the rule and the validator, not code.
      'packages/eslint-plugin-llm/test-corpus/**',
    ],
    'mana/ignores',
  ),
  {
    name: 'mana/typescript',
    files: ['**/*.{ts,tsx,mts,cts}'],
    extends: [tseslint.configs.recommended],
  },
  {
    name: 'mana/unused-vars',
    files: ['**/*.{ts,tsx,mts,cts}'],
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },
  {
    name: 'mana/llm-aliases',
    files: ['**/*.{ts,tsx,mts,cts,js,jsx,mjs,cjs}'],
    extends: [manaLlm.configs.recommended],
  },
  {
    name: 'mana/llm-aliases/where-provider-models-belong',
    files: [
      'packages/llm-router/**',
      'packages/llm-testkit/**',
      'packages/llm-aliases/**/*.test.ts',
      'packages/llm-usage-store/src/**/*.test.ts',
      'packages/llm-usage-store/src/test-records.ts',
      'packages/eslint-plugin-llm/**/*.test.ts',
      'apps/llm-gateway/src/**/*.test.ts',
      'apps/llm-gateway/test/**',
      'apps/llm-gateway/docs/**',
      'apps/dashboard/e2e/**',
      'bench/**',
    ],
    rules: { '@mana/llm/no-raw-model-string': 'off' },
  },
);
