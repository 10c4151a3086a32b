import { defineConfig } from '@playwright/test';
import { storageStatePath } from './fixtures/accounts.ts';
import { chromiumArgs, chromiumPath } from './fixtures/chromium.ts';

// Every process the specs start (control planes, workers) runs the workspace's TypeScript: the engine
// resolves to its sources under this export condition (ADR 0028), so no build of it is needed.
const sourceCondition = '--conditions=@sagaflow/source';
if (!(process.env.NODE_OPTIONS ?? '').includes(sourceCondition))
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} ${sourceCondition}`.trim();

/**
 * The specs that start a stack of their own (a control plane, the console, often a PostgreSQL cluster and a
 * worker) and never touch the shared one. They run one at a time beside the specs on the shared stack,
 * which also run one at a time: those count what the shared stack holds, and one freezes it (ADR 0082).
 */
const ownStack = [
  'anomalies',
  'failing-timeout',
  'held-run-shows-stuck',
  'instance-history-paging',
  'instance-repairs',
  'instances',
  'kept-draft-instance',
  'outbox-bulk-requeue',
  'outbox-requeue',
  'review56-approved-bulk-busy-item',
  'review56-busy-target',
  'review56-no-connection',
  'run-states',
  'sign-in-address-limit',
  'stuck-run',
].map((name) => `**/${name}.spec.ts`);

/** Specs run against the built console and a real control plane started by fixtures/start-stack.ts. */
export default defineConfig<{ sharedStack: boolean }>({
  testDir: './specs',
  globalSetup: './fixtures/start-stack.ts',
  outputDir: './test-results',
  timeout: 60_000,
  expect: { timeout: 20_000 },
  fullyParallel: false,
  forbidOnly: true,
  retries: 0,
  workers: 2,
  projects: [
    { name: 'shared-stack', testIgnore: ownStack, workers: 1 },
    { name: 'own-stack', testMatch: ownStack, workers: 1, use: { sharedStack: false } },
  ],
  // `npm test` reads the JSON report to print one closing line with the counts of every runner.
  reporter: [['list'], ['json', { outputFile: process.env.SAGAFLOW_E2E_JSON ?? 'test-results/e2e.json' }]],
  use: {
    browserName: 'chromium',
    screenshot: 'only-on-failure',
    trace: 'off',
    video: 'off',
    launchOptions: { executablePath: chromiumPath, args: chromiumArgs },
    // Every spec runs signed in as an operator unless it asks otherwise (the global setup saved it).
    storageState: storageStatePath('operator'),
  },
});
