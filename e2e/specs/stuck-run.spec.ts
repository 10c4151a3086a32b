import { randomUUID } from 'node:crypto';
import { createDatabase, startCluster, uniqueDatabaseName, type PgCluster } from '@sagaflow/test-postgres';
import { expectNoSeriousAxeViolation, saveScreenshot } from '../fixtures/page-checks.ts';
import { startConsoleOnPostgres, startHangingWorker } from '../fixtures/postgres-worker-stack.ts';
import type { ProcessGroup } from '../fixtures/process-group.ts';
import type { ConsoleStack } from '../fixtures/start-console-stack.ts';
import { expect, test } from '../fixtures/test.ts';

/**
 * Issue 10 E2E: an operator finds runs made stuck by SIGKILLing their worker, with reclaim off (the
 * default), and repairs them from the console. The worker is a real process on a real PostgreSQL 15,
 * sharing the database with the control plane the console talks to: it takes three demo.order runs'
 * first steps and is SIGKILLed while they are Running under it. The control plane's monitor then
 * finds each step's owner gone (ADR 0010) and the runs stuck. One is kicked from its page after a
 * preview, the other two in one bulk kick from the stuck list; the control plane's own worker runs
 * each step again, every run completes, and the audit trail has each kick.
 */
test.describe('runs whose worker was SIGKILLed', () => {
  let cluster: PgCluster | null = null;
  let worker: ProcessGroup | null = null;
  let stack: ConsoleStack | null = null;
  test.afterAll(async () => {
    await worker?.stop(0);
    await stack?.stop();
    await cluster?.stop();
  });

  test('are found stuck (owner gone); one is kicked from its page, two in a bulk kick; all complete, each kick audited', async ({
    page,
  }, testInfo) => {
    test.setTimeout(240_000);
    cluster = await startCluster();
    const url = await createDatabase(cluster.adminUrl, uniqueDatabaseName('e2e_stuck_run'));
    const orderIds = [1, 2, 3].map((n) => `sigkill-${n}-${randomUUID()}`);
    const { worker: hanging, runIds } = await startHangingWorker(url, orderIds);
    worker = hanging;
    if (hanging.pid) process.kill(-hanging.pid, 'SIGKILL');
    expect(await hanging.exited).toBe('SIGKILL');

    stack = await startConsoleOnPostgres(url);
    const { baseUrl, sessionCookie } = stack;
    await page.context().addCookies([{ name: 'sagaflow_session', value: sessionCookie, url: baseUrl }]);

    // The overview says three runs are stuck and links to the stuck runs, where they are listed.
    await page.goto(`${baseUrl}/`);
    const stuck = page.getByTestId('attention-stuck');
    await expect(stuck).toHaveAttribute('data-count', '3', { timeout: 60_000 });
    await stuck.getByRole('link').click();
    await expect(page).toHaveURL(/\/runs\?status=stuck/);
    const rowOf = (runId: string) => page.locator(`[data-testid="run-row"][data-run-id="${runId}"]`);
    for (const id of runIds) await expect(rowOf(id)).toContainText('owner_gone');
    await saveScreenshot(page, testInfo, 'stuck-runs-list');

    // Two of them in one bulk kick: a preview per run, one reason, each run's outcome.
    const [single = '', ...bulked] = runIds;
    for (const id of bulked) await rowOf(id).getByTestId('run-select').check();
    await expect(page.getByTestId('selection-bar')).toContainText('2 runs selected');
    await page.getByTestId('bulk-kind').selectOption('run.kick');
    await page.getByTestId('bulk-preview').click();
    const bulk = page.getByTestId('bulk-draft');
    await expect(bulk.getByTestId('bulk-item-preview')).toHaveText(['would apply', 'would apply']);
    await bulk.getByTestId('bulk-reason').fill('their worker machine died');
    await bulk.getByTestId('bulk-apply').click();
    await expect(bulk.getByTestId('bulk-applied')).toHaveText('Applied to 2 of 2.');
    // Sent, the selection is cleared: the outcomes stay in the panel, the ticks do not linger.
    await expect(page.getByTestId('selection-bar')).toHaveCount(0);
    await saveScreenshot(page, testInfo, 'stuck-runs-bulk-kick');

    // The third from its page, which leads with the reason, naming the step and the gone worker.
    await page.goto(`${baseUrl}/runs/${single}`);
    const banner = page.getByTestId('stuck-banner');
    await expect(banner.getByTestId('stuck-reason')).toContainText(/^owner_gone: step 1 \(demo\.charge-card\)/);
    // The control plane redelivered the dead worker's job (its lease ran out): that replay met the
    // step still held and parked the run, so it waits, stuck, as any run does once the lease is over.
    await expect(page.getByTestId('run-status')).toHaveText('Waiting');
    await saveScreenshot(page, testInfo, 'stuck-run');
    await expectNoSeriousAxeViolation(page);

    await page.getByTestId('repair-run.kick').click();
    const draft = page.getByTestId('repair-draft');
    await expect(draft.getByTestId('repair-preview')).toBeVisible();
    await draft.getByTestId('repair-reason').fill('the worker machine died mid-charge');
    await saveScreenshot(page, testInfo, 'stuck-run-kick-preview');
    await draft.getByTestId('repair-apply').click();
    await expect(draft.getByTestId('repair-applied')).toBeVisible();

    // The control plane's worker runs the step again (at least once) and the run goes on to the end.
    await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 60_000 });
    await expect(page.getByTestId('stuck-banner')).toHaveCount(0);
    await expect(page.getByTestId('events-timeline')).toContainText('run.unstuck');
    await saveScreenshot(page, testInfo, 'stuck-run-completed');

    // So did the bulk-kicked ones, and nothing is stuck any more.
    await page.goto(`${baseUrl}/runs?status=Completed`);
    for (const id of runIds) await expect(rowOf(id)).toContainText('Completed', { timeout: 60_000 });
    await page.goto(`${baseUrl}/`);
    await expect(page.getByTestId('attention-stuck')).toHaveAttribute('data-count', '0');

    for (const [id, reason] of [
      [single, 'the worker machine died mid-charge'],
      ...bulked.map((b) => [b, 'their worker machine died']),
    ] as const) {
      await page.goto(`${baseUrl}/audit?target=${id}`);
      const kick = page.getByTestId('audit-entry').filter({ hasText: 'run.kick' });
      await expect(kick).toHaveCount(1);
      await expect(kick).toContainText('applied');
      await expect(kick).toContainText(reason);
    }
  });
});
