import path from 'node:path';
import { rawModelPattern, rawModelPrefixPattern, type AliasSuggestion } from '@mana/llm-aliases';
import { AST_NODE_TYPES, type TSESLint, type TSESTree } from '@typescript-eslint/utils';
import { findAliasConfig, loadAliasConfig, type AliasIndex } from '../alias-config.js';
import { createRule } from '../create-rule.js';

export type Options = [
  {
    extraPrefixes?: string[];
    allow?: string[];
    aliasConfig?: string;
  },
];

export type MessageIds = 'rawModelString' | 'rawModelStringUseAlias' | 'replaceWithAlias';

/** The package product code imports the alias constants from. */
const ALIASES_MODULE = '@mana/llm-aliases';
const CONSTANT = 'MANA_LLM';
/** Long template literals are cut in messages. */
const MAX_SHOWN = 80;

type KeyOwner =
  | TSESTree.Property
  | TSESTree.PropertyDefinition
  | TSESTree.AccessorProperty
  | TSESTree.MethodDefinition
  | TSESTree.TSPropertySignature
  | TSESTree.TSAbstractPropertyDefinition;

const KEY_OWNERS: ReadonlySet<AST_NODE_TYPES> = new Set([
  AST_NODE_TYPES.Property,
  AST_NODE_TYPES.PropertyDefinition,
  AST_NODE_TYPES.AccessorProperty,
  AST_NODE_TYPES.MethodDefinition,
  AST_NODE_TYPES.TSPropertySignature,
  AST_NODE_TYPES.TSAbstractPropertyDefinition,
]);

/**
 * A string that names a module rather than holds a value: import/export sources,
 * `import()`, `require()`, `import x = require()`, `import('…')` types,
 * `declare module '…'`, and string-named import/export specifiers.
 */
function isModuleSpecifier(node: TSESTree.Literal): boolean {
  const parent = node.parent;
  switch (parent?.type) {
    case AST_NODE_TYPES.ImportDeclaration:
    case AST_NODE_TYPES.ExportAllDeclaration:
    case AST_NODE_TYPES.ExportNamedDeclaration:
    case AST_NODE_TYPES.ImportExpression:
      return parent.source === node;
    case AST_NODE_TYPES.TSExternalModuleReference:
      return true;
    case AST_NODE_TYPES.ImportSpecifier:
    case AST_NODE_TYPES.ExportSpecifier:
    case AST_NODE_TYPES.ImportAttribute:
      return true;
    case AST_NODE_TYPES.TSModuleDeclaration:
      return parent.id === node;
    case AST_NODE_TYPES.TSImportType:
      return parent.source === node;
    case AST_NODE_TYPES.TSLiteralType:
      return parent.parent?.type === AST_NODE_TYPES.TSImportType;
    case AST_NODE_TYPES.CallExpression:
      return (
        parent.callee.type === AST_NODE_TYPES.Identifier &&
        parent.callee.name === 'require' &&
        parent.arguments[0] === node
      );
    default:
      return false;
  }
}

function shown(value: string): string {
  const oneLine = value.replace(/\s*\n\s*/g, ' ');
  return oneLine.length > MAX_SHOWN ? `${oneLine.slice(0, MAX_SHOWN - 1)}…` : oneLine;
}

export const noRawModelString = createRule<Options, MessageIds>({
  name: 'no-raw-model-string',
  meta: {
    type: 'problem',
    docs: {
      description:
        'Disallow raw provider model ids such as `ollama/gemma3:12b`; product code names a `MANA_LLM` alias',
      recommended: true,
    },
    hasSuggestions: true,
    messages: {
      rawModelString:
        "Raw provider model string '{{value}}': name a MANA_LLM alias from @mana/llm-aliases instead; the gateway chooses the provider model.",
      rawModelStringUseAlias:
        "Raw provider model string '{{value}}': use MANA_LLM.{{key}} ('{{alias}}'), whose chain includes it.",
      replaceWithAlias: 'Replace with MANA_LLM.{{key}}',
    },
    schema: [
      {
        type: 'object',
        additionalProperties: false,
        properties: {
          extraPrefixes: {
            type: 'array',
            items: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' },
            uniqueItems: true,
            description:
              'Provider prefixes to treat like the built-in ones (ollama, groq, openrouter, together, google), e.g. an in-house `vllm`.',
          },
          allow: {
            type: 'array',
            items: { type: 'string' },
            uniqueItems: true,
            description:
              'Regular expressions (source strings); a model string matching any of them is not reported, e.g. "^ollama/nomic-embed-text$".',
          },
          aliasConfig: {
            type: 'string',
            description:
              'Path to the gateway alias config used for suggestions (relative to the working directory). Default: the nearest apps/llm-gateway/aliases.yaml above the linted file.',
          },
        },
      },
    ],
  },
  defaultOptions: [{ extraPrefixes: [], allow: [] }],
  create(context, [options]) {
    const extraPrefixes = options.extraPrefixes ?? [];
    const whole = rawModelPattern(extraPrefixes);
    const head = rawModelPrefixPattern(extraPrefixes);
    const allow = (options.allow ?? []).map((source) => new RegExp(source, 'u'));
    const sourceCode = context.sourceCode;

    let index: AliasIndex | undefined | null = null;
    /** Loaded on the first finding only; a missing or broken config means no suggestion. */
    function aliasIndex(): AliasIndex | undefined {
      if (index !== null) return index;
      const file =
        options.aliasConfig !== undefined
          ? path.resolve(context.cwd, options.aliasConfig)
          : (findAliasConfig(path.dirname(path.resolve(context.cwd, context.filename))) ??
            findAliasConfig(context.cwd));
      try {
        index = file === undefined ? undefined : loadAliasConfig(file);
      } catch {
        index = undefined; // `pnpm validate:config` and the validator report a broken config
      }
      return index;
    }

    function isAllowed(value: string): boolean {
      return allow.some((pattern) => pattern.test(value));
    }

    type ImportPlan = { local: string; fix?: (fixer: TSESLint.RuleFixer) => TSESLint.RuleFix };
    let plan: ImportPlan | undefined;
    /** Worked out once per file (its imports do not change while it is linted), on the first finding with a suggestion. */
    function importPlan(): ImportPlan {
      return (plan ??= planImport());
    }

    /** The name `MANA_LLM` is imported under, and how to add the import when it is not. */
    function planImport(): ImportPlan {
      const program = sourceCode.ast;
      const imports = program.body.filter(
        (statement): statement is TSESTree.ImportDeclaration =>
          statement.type === AST_NODE_TYPES.ImportDeclaration && statement.source.value === ALIASES_MODULE,
      );
      for (const declaration of imports) {
        if (declaration.importKind === 'type') continue;
        for (const specifier of declaration.specifiers) {
          if (
            specifier.type === AST_NODE_TYPES.ImportSpecifier &&
            specifier.importKind !== 'type' &&
            (specifier.imported.type === AST_NODE_TYPES.Identifier
              ? specifier.imported.name
              : specifier.imported.value) === CONSTANT
          ) {
            return { local: specifier.local.name };
          }
        }
      }
      const named = imports.find(
        (declaration) =>
          declaration.importKind !== 'type' &&
          declaration.specifiers.length > 0 &&
          declaration.specifiers.every((specifier) => specifier.type === AST_NODE_TYPES.ImportSpecifier),
      );
      const last = named?.specifiers.at(-1);
      if (last !== undefined) {
        return { local: CONSTANT, fix: (fixer) => fixer.insertTextAfter(last, `, ${CONSTANT}`) };
      }
      const statement = `import { ${CONSTANT} } from '${ALIASES_MODULE}';`;
      const lastImport = program.body.filter((node) => node.type === AST_NODE_TYPES.ImportDeclaration).at(-1);
      if (lastImport !== undefined) {
        return { local: CONSTANT, fix: (fixer) => fixer.insertTextAfter(lastImport, `\n${statement}`) };
      }
      const first = program.body[0];
      return {
        local: CONSTANT,
        fix: (fixer) =>
          first === undefined ? fixer.insertTextAfterRange([0, 0], `${statement}\n`) : fixer.insertTextBefore(first, `${statement}\n`),
      };
    }

    /** The text that replaces `node` with the constant, or undefined where no rewrite is safe. */
    function replacementFor(node: TSESTree.Literal | TSESTree.TemplateLiteral, local: string, key: string): string | undefined {
      const constant = `${local}.${key}`;
      const parent = node.parent;
      if (parent === undefined) return constant;
      if (parent.type === AST_NODE_TYPES.TaggedTemplateExpression) return undefined;
      if (parent.type === AST_NODE_TYPES.JSXAttribute) return `{${constant}}`;
      if (parent.type === AST_NODE_TYPES.TSLiteralType) return `typeof ${constant}`;
      if (parent.type === AST_NODE_TYPES.TSEnumMember) return undefined;
      if (KEY_OWNERS.has(parent.type) && (parent as KeyOwner).key === node) {
        if ((parent as KeyOwner).computed) return constant;
        if (parent.type === AST_NODE_TYPES.Property && parent.shorthand) return undefined;
        return `[${constant}]`;
      }
      return constant;
    }

    function report(node: TSESTree.Literal | TSESTree.TemplateLiteral, value: string, model: string | undefined): void {
      const suggestion: AliasSuggestion | undefined = model === undefined ? undefined : aliasIndex()?.get(model);
      if (suggestion === undefined) {
        context.report({ node, messageId: 'rawModelString', data: { value: shown(value) } });
        return;
      }
      const plan = importPlan();
      // A CommonJS script cannot take the ES import the rewrite needs.
      const replacement =
        sourceCode.ast.sourceType === 'module' ? replacementFor(node, plan.local, suggestion.key) : undefined;
      context.report({
        node,
        messageId: 'rawModelStringUseAlias',
        data: { value: shown(value), key: suggestion.key, alias: suggestion.alias },
        suggest:
          replacement === undefined
            ? null
            : [
                {
                  messageId: 'replaceWithAlias',
                  data: { key: suggestion.key },
                  *fix(fixer) {
                    yield fixer.replaceText(node, replacement);
                    if (plan.fix !== undefined) yield plan.fix(fixer);
                  },
                },
              ],
      });
    }

    return {
      Literal(node): void {
        if (typeof node.value !== 'string') return;
        if (!whole.test(node.value) || isAllowed(node.value) || isModuleSpecifier(node)) return;
        report(node, node.value, node.value);
      },
      TemplateLiteral(node): void {
        const first = node.quasis[0]?.value.cooked;
        if (first === undefined || first === null) return; // invalid escape in a tagged template
        if (node.expressions.length === 0) {
          if (whole.test(first) && !isAllowed(first)) report(node, first, first);
          return;
        }
        // `ollama/${name}`: the head alone already names a provider.
        if (!head.test(first)) return;
        // Shown as `ollama/${…}`, the same text the validation script prints.
        const text = `${first}\${…}`;
        if (isAllowed(text)) return;
        report(node, text, undefined);
      },
    };
  },
});
