// Root ESLint flat config for the whole workspace. The package boundaries in ARCHITECTURE.md
// ("Layout") and STYLE.md ("Boundaries") are enforced here; tooling/lint-rules proves each one fires.
//
// Flat config replaces (never merges) a rule's options when two config objects set the same rule, so
// every scope below that sets `@typescript-eslint/no-restricted-imports` repeats the workspace-wide
// patterns through `restrictedImports(...)`, and every scope that sets `no-restricted-syntax`
// repeats `noExportAll`.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import prettier from 'eslint-config-prettier/flat';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const tsFiles = ['**/*.ts', '**/*.tsx', '**/*.mts', '**/*.cts'];
const jsFiles = ['**/*.js', '**/*.mjs', '**/*.cjs'];

/**
 * The TypeScript programs the type-aware rules read types from (ADR 0092): every Node package as one
 * program, then the console and the e2e specs (DOM types). With the project service each package's
 * tsconfig.json was a program of its own, and each type-checked the engine's sources again.
 */
const typedPrograms = ['./tsconfig.node-packages.json', './apps/web/tsconfig.json', './e2e/tsconfig.json'];
/** TypeScript at the workspace's root (the vitest and Prisma configs), in no package's program. */
const rootTsFiles = ['*.ts'];

// ---------------------------------------------------------------------------------------------
// Import boundaries
// ---------------------------------------------------------------------------------------------

/** Banned in every package: reaching into another package's files instead of its `exports`. */
const workspacePatterns = [
  {
    regex: '^@sagaflow/[^/]+/src(/|$)',
    message: "Import the package's public entry (its package.json `exports`), not its src/ files.",
  },
  {
    // A relative path that climbs out of a package and into a workspace folder (`../../packages/x`).
    regex: '^(\\.\\./)+(apps|packages|tooling|e2e|bench)(/|$)',
    message: 'Do not climb into another workspace package with a relative path; depend on it by name.',
  },
  {
    // Same thing spelled through any path that passes a package's src/ (`../../../packages/engine/src/x`).
    regex: '(^|/)(apps|packages|tooling)/[^/]+/src(/|$)',
    message: 'Do not import another workspace package by file path; depend on it by name.',
  },
];

const engineBanned = {
  paths: [
    { name: 'next', message: 'The engine is framework-free: no Next.js.' },
    { name: 'react', message: 'The engine is framework-free: no React.' },
    { name: 'react-dom', message: 'The engine is framework-free: no React.' },
    { name: '@sagaflow/control', message: 'The engine must not depend on the control plane (apps/control).' },
    { name: '@sagaflow/web', message: 'The engine must not depend on the console (apps/web).' },
  ],
  patterns: [
    { regex: '^next/', message: 'The engine is framework-free: no Next.js.' },
    { regex: '^react-dom/', message: 'The engine is framework-free: no React.' },
    { regex: '^react/', message: 'The engine is framework-free: no React.' },
    { regex: '^@trpc/', message: 'The engine exposes no RPC layer; tRPC lives in apps/control.' },
    { regex: '^@sagaflow/(control|web)/', message: 'The engine must not depend on apps/*.' },
    { regex: '^[./](.*/)?apps(/|$)', message: 'The engine must not import from apps/* by path.' },
  ],
};

const webBanned = {
  paths: [
    { name: 'pg', message: 'The console never touches the database; ask apps/control through tRPC.' },
    {
      name: '@sagaflow/engine',
      allowTypeImports: true,
      message: 'The console must not run engine code; use `import type` or go through apps/control.',
    },
    {
      name: '@sagaflow/control',
      allowTypeImports: true,
      message: 'The console talks to apps/control only through tRPC; import its types with `import type`.',
    },
  ],
  patterns: [
    { regex: '^@prisma/', message: 'The console never touches the database; ask apps/control through tRPC.' },
    { regex: '^pg/', message: 'The console never touches the database; ask apps/control through tRPC.' },
    { regex: '^@electric-sql/', message: 'The console never touches the database; ask apps/control through tRPC.' },
    { regex: '^@sagaflow/engine/', message: 'No engine internals in the console (not even types by deep path).' },
    { regex: '^@sagaflow/control/', message: 'Import apps/control types from its package entry only.' },
  ],
};

/** Options for `@typescript-eslint/no-restricted-imports`: the workspace patterns plus a scope's own. */
function restrictedImports(scope = { paths: [], patterns: [] }) {
  return ['error', { paths: scope.paths, patterns: [...workspacePatterns, ...scope.patterns] }];
}

// ---------------------------------------------------------------------------------------------
// Syntax bans
// ---------------------------------------------------------------------------------------------

const noExportAll = {
  selector: 'ExportAllDeclaration',
  message: 'Re-export names explicitly (`export { a, type B } from ...`), not `export *`.',
};
const noProcessEnvImport = {
  selector: "ImportDeclaration[source.value=/^(node:)?process$/] > ImportSpecifier[imported.name='env']",
  message: 'Read configuration in the package edge (env.ts / main.ts) and pass it in.',
};

/** Files allowed to read `process.env`: the config edge, process entries, tests and their setup. */
const processEnvAllowed = [
  '**/env.ts',
  '**/main.ts',
  'apps/control/src/cli.ts',
  '**/*.config.ts',
  '**/*.config.mts',
  '**/*.test.ts',
  '**/*.test.tsx',
  '**/test/**',
  'e2e/**',
  'tooling/test-postgres/src/get-test-cluster.ts',
  // Node build/launch scripts (plain .mjs) are process entries too.
  'scripts/**',
  // The bench's launcher (node bench/run-built.mjs), a process entry like them.
  'bench/run-built.mjs',
  // The console's server entry (node apps/web/serve.mjs).
  'apps/web/serve.mjs',
];

export default defineConfig(
  globalIgnores([
    '**/node_modules/',
    '**/.tools/',
    '**/.next/',
    '**/.data/',
    '**/.scratch/',
    '**/dist/',
    '**/coverage/',
    '**/test-results/',
    '**/playwright-report/',
    'packages/engine/src/generated/',
    '**/next-env.d.ts',
    // Deliberately broken code that tooling/lint-rules feeds to ESLint with `ignore: false`.
    'tooling/lint-rules/fixtures/',
  ]),

  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },

  js.configs.recommended,

  // Type-checked rules for TypeScript. Every .ts file must belong to one of `typedPrograms`; a file
  // outside them is a lint error, except the workspace root's own, which the project service types.
  {
    files: tsFiles,
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        project: typedPrograms,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // `verbatimModuleSyntax` keeps every import that is not marked `type`, so types must be marked.
      // Inline style matches the code (`export { createEngine, type Engine }`); a statement that
      // imports only types is still rewritten to `import type {...}` so it is erased entirely.
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { prefer: 'type-imports', fixStyle: 'inline-type-imports', disallowTypeAnnotations: true },
      ],
      '@typescript-eslint/consistent-type-exports': ['error', { fixMixedExportsWithInlineTypeSpecifier: true }],
      '@typescript-eslint/no-import-type-side-effects': 'error',
      // An action's `async run() { return x; }` is the readable way to satisfy a Promise-returning
      // contract; the rule would force `() => Promise.resolve(x)`. The promise rules above are the
      // ones that catch real bugs.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },

  {
    files: rootTsFiles,
    languageOptions: {
      parserOptions: { project: null, projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },

  // Plain JavaScript (the Node scripts and any *.config.mjs) is linted without type information.
  {
    files: jsFiles,
    languageOptions: { globals: { ...globals.node } },
  },

  // TypeScript at the workspace root (prisma.config.ts) belongs to no package, so no tsconfig and no
  // `typecheck` script covers it: lint it syntactically rather than against unresolved types.
  {
    files: ['*.ts', '*.mts', '*.cts'],
    extends: [tseslint.configs.disableTypeChecked],
  },

  // Rules for all code.
  {
    files: [...tsFiles, ...jsFiles],
    plugins: { 'import-x': importX },
    settings: {
      // Without these, import-x only parses .js dependencies and no-cycle never sees a .ts file.
      'import-x/extensions': ['.ts', '.tsx', '.mts', '.cts', '.js', '.mjs', '.cjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx', '.mts', '.cts'] },
      'import-x/external-module-folders': ['node_modules', 'node_modules/@types'],
      'import-x/resolver-next': [
        createNodeResolver({ extensions: ['.ts', '.tsx', '.mts', '.cts', '.mjs', '.js', '.cjs', '.json'] }),
      ],
    },
    rules: {
      eqeqeq: ['error', 'always'],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'no-restricted-syntax': ['error', noExportAll, noProcessEnvImport],
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'Read configuration in the package edge (env.ts / main.ts) and pass it in.',
        },
      ],
    },
  },

  // Workspace-wide import boundaries. The typescript-eslint flavour is used everywhere (it parses
  // plain JS too) because it understands `import type`, which the web scope needs.
  {
    files: [...tsFiles, ...jsFiles],
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: { '@typescript-eslint/no-restricted-imports': restrictedImports() },
  },
  {
    files: ['packages/engine/**'],
    rules: { '@typescript-eslint/no-restricted-imports': restrictedImports(engineBanned) },
  },
  {
    files: ['apps/web/**'],
    rules: { '@typescript-eslint/no-restricted-imports': restrictedImports(webBanned) },
  },

  // Where `process.env` may be read.
  {
    files: processEnvAllowed,
    rules: {
      'no-restricted-properties': 'off',
      'no-restricted-syntax': ['error', noExportAll],
    },
  },

  // Last: turn off every stylistic rule that Prettier owns.
  prettier,
);
