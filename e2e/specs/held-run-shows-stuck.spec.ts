import { execFileSync } from 'node:child_process';
import { createDatabase, startCluster, uniqueDatabaseName, type PgCluster } from '@sagaflow/test-postgres';
import { saveScreenshot } from '../fixtures/page-checks.ts';
import { holdRunInPsql, startParkedReservation, type HeldByPsql } from '../fixtures/held-run.ts';
import { startConsoleOnPostgres } from '../fixtures/postgres-worker-stack.ts';
import type { ConsoleStack } from '../fixtures/start-console-stack.ts';
import { expect, test } from '../fixtures/test.ts';

/**
 * ADR 0138. A run another session holds for good cannot carry a stuck reason, so before this the console's
 * "Needs attention", its stuck list and the run's page did not show it stuck. In real Chromium on a real
 * PostgreSQL: a psql keeps a parked run's row in an open transaction, and the run carries a `run_held`
 * entry as the monitor journals one after a minute of sweeps (written here by hand: the monitor's minute
 * of its own clock is what the engine's tests drive). On-call finds it from the overview, in the stuck
 * list, and on its page with what to do and only the repairs safe for it.
 */
test.describe('a run another session holds for good', () => {
  let cluster: PgCluster | null = null;
  let stack: ConsoleStack | null = null;
  let psql: HeldByPsql | null = null;
  test.afterAll(async () => {
    psql?.kill();
    await stack?.stop();
    await cluster?.stop();
  });

  test('is counted under "Needs attention", listed stuck run_held, and explained on its page', async ({
    page,
  }, testInfo) => {
    test.setTimeout(240_000);
    cluster = await startCluster();
    const url = await createDatabase(cluster.adminUrl, uniqueDatabaseName('e2e_held_run'));
    stack = await startConsoleOnPostgres(url);
    const { baseUrl, sessionCookie } = stack;

    const runId = await startParkedReservation(baseUrl, sessionCookie);
    // Another session keeps the run's row: a real psql in an open transaction.
    psql = await holdRunInPsql(url, runId);
    // The entry the monitor writes after a minute of finding it held (ADR 0137), in a session of its own.
    const since = new Date(Date.now() - 61_000).toISOString();
    const details = JSON.stringify({ sweep: 'expiry', held_seconds: 61, since, waited_ms: 0 });
    execFileSync('/usr/lib/postgresql/15/bin/psql', [
      '-X',
      '-q',
      '-v',
      'ON_ERROR_STOP=1',
      url,
      '-c',
      `insert into "sagaflow"."anomaly_log" (code, run_id, site, message, details) values ('run_held', '${runId}', 'monitor.run', 'held for good', '${details}'::jsonb)`,
    ]);

    await page.context().addCookies([{ name: 'sagaflow_session', value: sessionCookie, url: baseUrl }]);
    await page.goto(`${baseUrl}/`);
    const item = page.getByTestId('attention-stuck-reason').filter({ hasText: 'run_held' });
    await expect(item).toHaveAttribute('data-count', '1');
    await item.getByRole('link').click();

    const row = page.locator(`[data-testid="run-row"][data-run-id="${runId}"]`);
    await expect(row.getByTestId('stuck-tag')).toBeVisible();
    await expect(row).toContainText('run_held');
    await expect(page.getByTestId('run-row')).toHaveCount(1);

    await row.getByRole('link', { name: runId.slice(0, 8) }).click();
    await expect(page.getByTestId('stuck-reason')).toContainText(`run_held: another database session has held`);
    await expect(page.getByTestId('stuck-hint')).toContainText('pg_stat_activity');
    await expect(page.getByTestId('repair-run.kick')).toBeVisible();
    await expect(page.getByTestId('repair-run.terminate')).toBeVisible();
    await expect(page.getByTestId('repair-run.cancel')).toHaveCount(0);
    await saveScreenshot(page, testInfo, 'held-run-page');

    await psql.letGo();
  });
});
