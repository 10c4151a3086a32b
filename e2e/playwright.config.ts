import { defineConfig } from '@playwright/test';
import { storageStatePath } from './fixtures/accounts.ts';
import { chromiumArgs, chromiumPath } from './fixtures/chromium.ts';

// Every process the specs start (control planes, workers) runs the workspace's TypeScript: the engine
// resolves to its sources under this export condition (ADR 0028), so no build of it is needed.
const sourceCondition = '--conditions=@sagaflow/source';
if (!(process.env.NODE_OPTIONS ?? '').includes(sourceCondition))
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} ${sourceCondition}`.trim();

/** Specs run against the built console and a real control plane started by fixtures/start-stack.ts. */
export default defineConfig({
  testDir: './specs',
  globalSetup: './fixtures/start-stack.ts',
  outputDir: './test-results',
  timeout: 60_000,
  expect: { timeout: 20_000 },
  fullyParallel: false,
  forbidOnly: true,
  retries: 0,
  workers: 1,
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
