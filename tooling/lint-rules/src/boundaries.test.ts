// Proves that the root eslint.config.mjs enforces the boundaries in STYLE.md / ARCHITECTURE.md:
// each rule fires on a violating snippet placed at a virtual path inside the right package, and stays
// quiet on the allowed counterpart.
//
// Why two linters: type-checked rules need every linted file to belong to a tsconfig, and a virtual
// path (`packages/engine/src/x.ts`) belongs to none, so the project service rejects it. The boundary
// rules are purely syntactic, so `boundaryLinter` runs the real config with only the type-aware layer
// switched off (and a test below checks the boundary rules it applies are the real ones). The
// type-aware rules are proved on real files in ../fixtures, which `eslint .` ignores.
import { fileURLToPath } from 'node:url';

import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it, vi } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

// A linter's first file builds its program (type information, the import graph): 27 s and 42 s for two
// tests in a CI run on a loaded machine, against the unit project's 30 s. The checks are not timed.
vi.setConfig({ testTimeout: 120_000 });
const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));

const realLinter = new ESLint({ cwd: repoRoot });
const boundaryLinter = new ESLint({
  cwd: repoRoot,
  overrideConfig: [{ files: ['**/*.ts', '**/*.tsx'], ...(tseslint.configs.disableTypeChecked as Linter.Config) }],
});

const IMPORTS = '@typescript-eslint/no-restricted-imports';
const SYNTAX = 'no-restricted-syntax';
const PROPERTIES = 'no-restricted-properties';

/** Lints `code` as if it lived at `filePath` (relative to the repo root) and returns the rule ids hit. */
async function ruleIdsFor(filePath: string, code: string): Promise<string[]> {
  const [result] = await boundaryLinter.lintText(code, { filePath, warnIgnored: true });
  if (result === undefined) throw new Error(`no lint result for ${filePath}`);
  // A parse error or "file ignored" has no ruleId; it must not pass for "the rule did not fire".
  expect(result.messages.filter((m) => m.ruleId === null)).toEqual([]);
  return result.messages.map((m) => m.ruleId ?? '');
}

async function ruleIdsForFixture(name: string): Promise<string[]> {
  // `ignore: false` because eslint.config.mjs ignores the fixtures for the normal `eslint .` run.
  const linter = new ESLint({ cwd: repoRoot, ignore: false });
  const [result] = await linter.lintFiles([fixture(name)]);
  if (result === undefined) throw new Error(`no lint result for ${name}`);
  expect(result.messages.filter((m) => m.ruleId === null)).toEqual([]);
  return result.messages.map((m) => m.ruleId ?? '');
}

type Case = readonly [description: string, filePath: string, code: string, ruleId: string];

describe('the engine imports no framework, RPC layer or app', () => {
  const cases: Case[] = [
    ['react', 'packages/engine/src/x.ts', "import React from 'react';\nexport const r = React;\n", IMPORTS],
    [
      'react (type-only)',
      'packages/engine/src/x.ts',
      "import type { ReactNode } from 'react';\nexport type R = ReactNode;\n",
      IMPORTS,
    ],
    [
      'react-dom/client',
      'packages/engine/src/x.ts',
      "import { createRoot } from 'react-dom/client';\nexport const r = createRoot;\n",
      IMPORTS,
    ],
    ['next', 'packages/engine/src/x.ts', "import next from 'next';\nexport const n = next;\n", IMPORTS],
    [
      'next/server',
      'packages/engine/src/runtime/x.ts',
      "import { NextResponse } from 'next/server';\nexport const n = NextResponse;\n",
      IMPORTS,
    ],
    [
      '@trpc/server',
      'packages/engine/src/x.ts',
      "import { initTRPC } from '@trpc/server';\nexport const t = initTRPC;\n",
      IMPORTS,
    ],
    [
      '@sagaflow/control',
      'packages/engine/src/x.ts',
      "import { parseEnv } from '@sagaflow/control';\nexport const p = parseEnv;\n",
      IMPORTS,
    ],
    ['@sagaflow/web', 'packages/engine/src/x.ts', "import '@sagaflow/web';\n", IMPORTS],
    [
      'a relative path into apps/',
      'packages/engine/src/x.ts',
      "import { parseEnv } from '../../../apps/control/src/env.ts';\nexport const p = parseEnv;\n",
      IMPORTS,
    ],
    [
      'react from an engine test',
      'packages/engine/test/x.test.ts',
      "import React from 'react';\nexport const r = React;\n",
      IMPORTS,
    ],
  ];
  it.each(cases)('an engine import of %s is rejected', async (_name, filePath, code, ruleId) => {
    expect(await ruleIdsFor(filePath, code)).toContain(ruleId);
  });

  it('the engine may import its own files and its database drivers', async () => {
    const code = [
      "import pg from 'pg';",
      "import { z } from 'zod';",
      "import type { Database } from '../db/database.ts';",
      "import { migrate } from '../db/migrate.ts';",
      'export const used = [pg, z, migrate];',
      'export type Db = Database;',
      '',
    ].join('\n');
    expect(await ruleIdsFor('packages/engine/src/runtime/x.ts', code)).toEqual([]);
  });
});

describe('the console imports no database code and no engine or control-plane values', () => {
  const cases: Case[] = [
    [
      '@prisma/client',
      'apps/web/app/x.tsx',
      "import { PrismaClient } from '@prisma/client';\nexport const p = PrismaClient;\n",
      IMPORTS,
    ],
    [
      '@prisma/adapter-pg',
      'apps/web/lib/x.ts',
      "import { PrismaPg } from '@prisma/adapter-pg';\nexport const p = PrismaPg;\n",
      IMPORTS,
    ],
    ['pg', 'apps/web/app/x.ts', "import pg from 'pg';\nexport const p = pg;\n", IMPORTS],
    [
      '@electric-sql/pglite',
      'apps/web/app/x.ts',
      "import { PGlite } from '@electric-sql/pglite';\nexport const p = PGlite;\n",
      IMPORTS,
    ],
    [
      'an @sagaflow/engine value',
      'apps/web/app/x.ts',
      "import { createEngine } from '@sagaflow/engine';\nexport const e = createEngine;\n",
      IMPORTS,
    ],
    [
      'an @sagaflow/engine deep path',
      'apps/web/app/x.ts',
      "import type { Engine } from '@sagaflow/engine/testing';\nexport type E = Engine;\n",
      IMPORTS,
    ],
    [
      'an @sagaflow/control value',
      'apps/web/app/y.ts',
      "import { parseEnv } from '@sagaflow/control';\nexport const p = parseEnv;\n",
      IMPORTS,
    ],
    [
      'a value mixed with a type from @sagaflow/control',
      'apps/web/app/y.ts',
      "import { parseEnv, type AppRouter } from '@sagaflow/control';\nexport const p = parseEnv;\nexport type R = AppRouter;\n",
      IMPORTS,
    ],
    [
      'a relative path into packages/',
      'apps/web/app/runs/x.tsx',
      "import { migrate } from '../../../../packages/engine/src/db/migrate.ts';\nexport const m = migrate;\n",
      IMPORTS,
    ],
  ];
  it.each(cases)('a console import of %s is rejected', async (_name, filePath, code, ruleId) => {
    expect(await ruleIdsFor(filePath, code)).toContain(ruleId);
  });

  it('the console may import the control plane router type, React, Next and tRPC', async () => {
    const code = [
      "import type { AppRouter } from '@sagaflow/control';",
      "import { createTRPCClient, httpBatchLink } from '@trpc/client';",
      "import Link from 'next/link';",
      "import { useState } from 'react';",
      'export const client = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: "/api" })] });',
      'export const used = [Link, useState];',
      '',
    ].join('\n');
    expect(await ruleIdsFor('apps/web/app/x.tsx', code)).toEqual([]);
  });

  it('the console may import a type from @sagaflow/control with an inline type specifier', async () => {
    const code = "import { type AppRouter } from '@sagaflow/control';\nexport type R = AppRouter;\n";
    expect(await ruleIdsFor('apps/web/app/x.ts', code)).not.toContain(IMPORTS);
  });
});

describe('no package reaches into another package by path', () => {
  const cases: Case[] = [
    [
      'a deep @sagaflow/engine/src import',
      'apps/control/src/x.ts',
      "import { migrate } from '@sagaflow/engine/src/db/migrate.ts';\nexport const m = migrate;\n",
      IMPORTS,
    ],
    [
      'a deep @sagaflow/test-postgres/src import',
      'packages/engine/test/x.ts',
      "import { startCluster } from '@sagaflow/test-postgres/src/start-cluster.ts';\nexport const s = startCluster;\n",
      IMPORTS,
    ],
    [
      '../../packages from bench',
      'bench/src/x.ts',
      "import { migrate } from '../../packages/engine/src/index.ts';\nexport const m = migrate;\n",
      IMPORTS,
    ],
    [
      '../apps from e2e',
      'e2e/x.ts',
      "import { parseEnv } from '../apps/control/src/index.ts';\nexport const p = parseEnv;\n",
      IMPORTS,
    ],
    [
      '../../../packages from tooling',
      'tooling/test-postgres/src/x.ts',
      "import { migrate } from '../../../packages/engine/src/db/migrate.ts';\nexport const m = migrate;\n",
      IMPORTS,
    ],
    [
      '../../apps from apps',
      'apps/control/src/x.ts',
      "import '../../web/app/page.tsx';\nimport '../../../apps/web/app/page.tsx';\n",
      IMPORTS,
    ],
  ];
  it.each(cases)('%s is rejected', async (_name, filePath, code, ruleId) => {
    expect(await ruleIdsFor(filePath, code)).toContain(ruleId);
  });

  it('public entries of workspace packages are allowed', async () => {
    const code = [
      "import { createEngine } from '@sagaflow/engine';",
      "import { createTestDatabase } from '@sagaflow/engine/testing';",
      "import { getTestCluster } from '@sagaflow/test-postgres';",
      "import { startControlPlane } from '@sagaflow/control';",
      'export const used = [createEngine, createTestDatabase, getTestCluster, startControlPlane];',
      '',
    ].join('\n');
    expect(await ruleIdsFor('e2e/fixtures/x.ts', code)).toEqual([]);
  });
});

describe('re-exports are explicit', () => {
  it('`export * from` is rejected', async () => {
    expect(await ruleIdsFor('packages/engine/src/index.ts', "export * from './db/migrate.ts';\n")).toContain(SYNTAX);
  });
  it('`export * as ns from` is rejected', async () => {
    expect(await ruleIdsFor('apps/control/src/x.ts', "export * as db from './db.ts';\n")).toContain(SYNTAX);
  });
  it('`export * from` is rejected even where process.env is allowed', async () => {
    expect(await ruleIdsFor('apps/control/src/env.ts', "export * from './db.ts';\n")).toContain(SYNTAX);
  });
  it('named re-exports are allowed', async () => {
    const code = "export { migrate, type MigrateOptions } from './db/migrate.ts';\n";
    expect(await ruleIdsFor('packages/engine/src/index.ts', code)).toEqual([]);
  });
});

describe('process.env is read only at the edges', () => {
  const read = 'export const url = process.env.DATABASE_URL;\n';
  const banned: Case[] = [
    ['engine source', 'packages/engine/src/x.ts', read, PROPERTIES],
    ['a control-plane router', 'apps/control/src/api/x.ts', read, PROPERTIES],
    ['a console page', 'apps/web/app/page.tsx', read, PROPERTIES],
    ['a test-postgres module other than get-test-cluster', 'tooling/test-postgres/src/x.ts', read, PROPERTIES],
    [
      'destructuring in engine source',
      'packages/engine/src/x.ts',
      'const { env } = process;\nexport const e = env;\n',
      PROPERTIES,
    ],
    ['a computed member', 'packages/engine/src/x.ts', "export const e = process['env'];\n", PROPERTIES],
    [
      'an import from node:process',
      'packages/engine/src/x.ts',
      "import { env } from 'node:process';\nexport const e = env;\n",
      SYNTAX,
    ],
  ];
  it.each(banned)('a read in %s is rejected', async (_name, filePath, code, ruleId) => {
    expect(await ruleIdsFor(filePath, code)).toContain(ruleId);
  });

  const allowed = [
    'apps/control/src/env.ts',
    'apps/web/env.ts',
    'apps/control/src/main.ts',
    'packages/engine/src/db/migrate.test.ts',
    'packages/engine/test/support/test-database.ts',
    'packages/engine/vitest.config.ts',
    'apps/web/next.config.ts',
    'e2e/fixtures/login.ts',
    'tooling/test-postgres/src/get-test-cluster.ts',
    'scripts/x.mjs',
  ];
  it.each(allowed)('a read in %s is allowed', async (filePath) => {
    expect(await ruleIdsFor(filePath, read)).toEqual([]);
  });
});

describe('everyday correctness rules', () => {
  it('eqeqeq rejects == and != (including `== null`)', async () => {
    const code = 'export const f = (a: unknown, b: unknown) => a == b || a != null;\n';
    expect(await ruleIdsFor('packages/engine/src/x.ts', code)).toEqual(['eqeqeq', 'eqeqeq']);
  });
  it('eqeqeq accepts === and !==', async () => {
    const code = 'export const f = (a: unknown, b: unknown) => a === b || a !== null;\n';
    expect(await ruleIdsFor('packages/engine/src/x.ts', code)).toEqual([]);
  });
  it('a type imported as a value is rejected (verbatimModuleSyntax would keep the import)', async () => {
    const code = "import { Database } from './db/database.ts';\nexport type Db = Database;\n";
    expect(await ruleIdsFor('packages/engine/src/x.ts', code)).toContain('@typescript-eslint/consistent-type-imports');
  });
  it('an import cycle is rejected', async () => {
    expect(await ruleIdsForFixture('cycle-a.ts')).toContain('import-x/no-cycle');
  });
});

describe('type-checked rules run on real files', () => {
  it('a floating promise is rejected', async () => {
    expect(await ruleIdsForFixture('floating-promise.ts')).toContain('@typescript-eslint/no-floating-promises');
  });
  it('an async callback where a sync one is expected is rejected', async () => {
    expect(await ruleIdsForFixture('misused-promise.ts')).toContain('@typescript-eslint/no-misused-promises');
  });
  it('awaited and explicitly voided promises are allowed', async () => {
    expect(await ruleIdsForFixture('awaited-promise.ts')).toEqual([]);
  });
});

describe('the boundary linter is the real config minus type information', () => {
  const boundaryRules = [
    IMPORTS,
    SYNTAX,
    PROPERTIES,
    'eqeqeq',
    'import-x/no-cycle',
    '@typescript-eslint/consistent-type-imports',
  ];
  const paths = [
    'packages/engine/src/x.ts',
    'apps/web/app/x.tsx',
    'apps/control/src/env.ts',
    'e2e/fixtures/x.ts',
    'tooling/test-postgres/src/get-test-cluster.ts',
  ];
  it.each(paths)('applies the same boundary rules to %s', async (filePath) => {
    const pick = (config: Linter.Config | undefined) =>
      Object.fromEntries(boundaryRules.map((rule) => [rule, config?.rules?.[rule]]));
    const real = pick((await realLinter.calculateConfigForFile(filePath)) as Linter.Config | undefined);
    const syntaxOnly = pick((await boundaryLinter.calculateConfigForFile(filePath)) as Linter.Config | undefined);
    expect(syntaxOnly).toEqual(real);
    expect(real[IMPORTS]).toBeDefined();
  });
});

describe('what `eslint .` skips', () => {
  it.each([
    ['packages/engine/src/generated/prisma/client.ts', true],
    ['apps/web/next-env.d.ts', true],
    ['apps/web/.next/server/x.js', true],
    ['tooling/lint-rules/fixtures/floating-promise.ts', true],
    ['packages/engine/src/index.ts', false],
    ['apps/web/app/page.tsx', false],
    ['scripts/pnpm.mjs', false],
    ['eslint.config.mjs', false],
  ] as const)('%s ignored: %s', async (filePath, ignored) => {
    expect(await realLinter.isPathIgnored(filePath)).toBe(ignored);
  });
});
