import { createRequire } from 'node:module';
import type { TSESLint } from '@typescript-eslint/utils';
import { noRawModelString } from './rules/no-raw-model-string.js';

export {
  AliasConfigError,
  DEFAULT_ALIAS_CONFIG,
  findAliasConfig,
  loadAliasConfig,
  parseAliasConfig,
  type AliasIndex,
} from './alias-config.js';
export type { Options as NoRawModelStringOptions } from './rules/no-raw-model-string.js';

/** The namespace rules are configured under: `@mana/llm/no-raw-model-string`. */
export const PLUGIN_NAMESPACE = '@mana/llm';

export const rules = {
  'no-raw-model-string': noRawModelString,
};

interface LlmPlugin {
  meta: { name: string; version: string };
  rules: typeof rules;
  configs: { recommended: TSESLint.FlatConfig.Config };
}

const { name, version } = createRequire(import.meta.url)('../package.json') as { name: string; version: string };

const plugin: LlmPlugin = {
  meta: { name, version },
  rules,
  configs: {} as LlmPlugin['configs'],
};

/** Flat config: registers the plugin and turns `no-raw-model-string` on as an error. */
plugin.configs.recommended = {
  name: '@mana/llm/recommended',
  plugins: { [PLUGIN_NAMESPACE]: plugin as unknown as TSESLint.FlatConfig.Plugin },
  rules: { [`${PLUGIN_NAMESPACE}/no-raw-model-string`]: 'error' },
};

export const configs = plugin.configs;
export default plugin;
