import { configDefaults, defineConfig } from 'vitest/config';
import { sourceCondition, withSourceCondition } from './scripts/lib/source-condition.mjs';
import { recordUnhandledError } from './scripts/lib/unhandled-errors.mjs';
import { SlowFilesFirst } from './vitest.slow-files-first.ts';

// Inside this workspace @sagaflow/engine resolves to its TypeScript sources (the `@sagaflow/source`
// export condition), so tests need no build; processes the tests spawn inherit it through NODE_OPTIONS.
process.env.NODE_OPTIONS = withSourceCondition(process.env.NODE_OPTIONS);
const workspaceSources = {
  resolve: { conditions: [sourceCondition, 'module', 'node', 'development|production'] },
  ssr: { resolve: { conditions: [sourceCondition, 'node', 'development|production'] } },
};

const engineIntegration = ['packages/engine/test/**/*.test.ts'];

/**
 * A worker runs its files one after another in one process, imports kept (ADR 0081): a file no longer pays
 * ~1 s of imports and a cold process each time. Every file opens and closes what it uses;
 * `vitest.between-files.ts` puts the clock back after each.
 */
const sharedWorker = { isolate: false, setupFiles: ['./vitest.between-files.ts'] };

/**
 * One run, five projects: pure unit tests; the engine suite on embedded PGlite; the same suite
 * plus concurrency and control-plane tests on a real PostgreSQL 15 server started by the harness;
 * the two harnesses' own tests (PostgreSQL, NATS). `*.pg.test.ts` files need real concurrent
 * connections: PostgreSQL only.
 */
export default defineConfig({
  test: {
    // Two files at a time on these 2-core machines: most of a file's time is spent waiting on a database or
    // a child process, so the second file fills it (ADR 0065's second addendum, ADR 0081).
    maxWorkers: 2,
    // Within each project, the files known to be slow start first, so the run does not end on one of
    // them alone (ADR 0096).
    sequence: { sequencer: SlowFilesFirst },
    // Errors no test awaited, named again at the end of `npm test` (scripts/lib/unhandled-errors.mjs).
    onUnhandledError: recordUnhandledError,
    projects: [
      {
        ...workspaceSources,
        test: {
          name: 'unit',
          ...sharedWorker,
          include: [
            'packages/*/src/**/*.test.ts',
            'apps/control/src/**/*.test.ts',
            'apps/web/runs/**/*.test.ts',
            'apps/web/ui/**/*.test.ts',
            'apps/web/auth/**/*.test.ts',
            'apps/web/repairs/**/*.test.ts',
            'apps/web/instances/**/*.test.ts',
            'apps/web/operators/**/*.test.ts',
            'tooling/lint-rules/src/**/*.test.ts',
            'bench/src/**/*.test.ts',
            'scripts/lib/**/*.test.mjs',
          ],
          // The bench's plan test needs the PostgreSQL project's server.
          exclude: [...configDefaults.exclude, 'bench/src/**/*.pg.test.ts'],
          testTimeout: 30_000,
        },
      },
      {
        ...workspaceSources,
        test: {
          name: 'engine-pglite',
          ...sharedWorker,
          include: engineIntegration,
          exclude: ['**/*.pg.test.ts'],
          env: { SAGAFLOW_TEST_DB: 'pglite' },
          globalSetup: [
            'packages/engine/test/support/global-setup-pglite.ts',
            'apps/control/test/support/global-setup-test-build.ts',
          ],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        ...workspaceSources,
        test: {
          name: 'postgres',
          ...sharedWorker,
          include: [
            ...engineIntegration,
            'apps/control/test/**/*.test.ts',
            'examples/*/test/**/*.test.ts',
            'bench/src/**/*.pg.test.ts',
          ],
          // *.pglite.test.ts are about the embedded database itself (its data directory), not the engine on it.
          exclude: ['**/*.pglite.test.ts'],
          env: { SAGAFLOW_TEST_DB: 'postgres' },
          // The cluster and its template; the control plane and the engine compiled for the processes the
          // tests spawn (one build per run, shared with engine-pglite's).
          globalSetup: [
            'packages/engine/test/support/global-setup-postgres.ts',
            'apps/control/test/support/global-setup-test-build.ts',
          ],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        ...workspaceSources,
        test: {
          name: 'test-nats',
          include: ['tooling/test-nats/src/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        ...workspaceSources,
        test: {
          name: 'test-postgres',
          include: ['tooling/test-postgres/src/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
