import { createDatabase, startCluster, uniqueDatabaseName, type PgCluster } from '@sagaflow/test-postgres';
import { saveScreenshot } from '../fixtures/page-checks.ts';
import { holdRunInPsql, startParkedReservation, type HeldByPsql } from '../fixtures/held-run.ts';
import { startConsoleOnPostgres } from '../fixtures/postgres-worker-stack.ts';
import type { ConsoleStack } from '../fixtures/start-console-stack.ts';
import { expect, test } from '../fixtures/test.ts';

/**
 * Review 56 (ADR 0132 §1). A repair whose run another session holds gives up within its limit and
 * answers `target_busy` (409): nothing changed, nothing audited, "send the same command again once the
 * other session lets go". In real Chromium on a real PostgreSQL: an operator applies a cancel from the
 * run's page while another session keeps the run's row. Expected (what Stripe's dashboard does with its
 * own lock_timeout): the console says the run was busy and nothing was done, not that the command was
 * rejected, and lets the operator send it again; sent again once the row is let go, it applies.
 */
test.describe('a repair on a run another session holds', () => {
  let cluster: PgCluster | null = null;
  let stack: ConsoleStack | null = null;
  let psql: HeldByPsql | null = null;
  test.afterAll(async () => {
    psql?.kill();
    await stack?.stop();
    await cluster?.stop();
  });

  test('the console says the run was busy, not that the cancel was rejected, and it applies when sent again', async ({
    page,
  }, testInfo) => {
    test.setTimeout(240_000);
    cluster = await startCluster();
    const url = await createDatabase(cluster.adminUrl, uniqueDatabaseName('e2e_r56_busy'));
    // A short transaction limit, so the lock wait (half of it) is 1 s.
    stack = await startConsoleOnPostgres(url, { processes: { transaction_timeout_ms: 2000 } });
    const { baseUrl, sessionCookie } = stack;

    const runId = await startParkedReservation(baseUrl, sessionCookie);

    await page.context().addCookies([{ name: 'sagaflow_session', value: sessionCookie, url: baseUrl }]);
    await page.goto(`${baseUrl}/runs/${runId}`);
    await expect(page.getByTestId('run-status')).toHaveText('Waiting');
    await page.getByTestId('repair-run.cancel').click();
    const draft = page.getByTestId('repair-draft');
    await expect(draft.getByTestId('repair-preview')).toBeVisible();
    await draft.getByTestId('repair-reason').fill('customer called to cancel');

    // Another session keeps the run's row: a real psql, as an operator's would, in an open transaction.
    psql = await holdRunInPsql(url, runId);
    await draft.getByTestId('repair-apply').click();
    const answer = draft.getByRole('alert');
    await expect(answer).toBeVisible({ timeout: 30_000 });
    await saveScreenshot(page, testInfo, 'r56-busy-target');
    const said = (await answer.textContent()) ?? '';
    await psql.letGo();
    expect(said, said).toMatch(/another session held/);
    // Not "Rejected": the command was not refused, its target was busy, and it can be sent again as it is.
    expect(said, `the console said: ${said}`).not.toMatch(/^Rejected/);
    await expect(draft.getByTestId('repair-apply')).toBeEnabled();
    await draft.getByTestId('repair-apply').click();
    await expect(draft.getByTestId('repair-applied')).toBeVisible({ timeout: 30_000 });
  });
});
