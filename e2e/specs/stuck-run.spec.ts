import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDatabase, startCluster, uniqueDatabaseName, type PgCluster } from '@sagaflow/test-postgres';
import { expectNoSeriousAxeViolation, saveScreenshot } from '../fixtures/page-checks.ts';
import { startProcessGroup, type ProcessGroup } from '../fixtures/process-group.ts';
import { startConsoleStack, type ConsoleStack } from '../fixtures/start-console-stack.ts';
import { expect, test } from '../fixtures/test.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const workerScript = fileURLToPath(new URL('../fixtures/hanging-order-worker.ts', import.meta.url));

/**
 * Issue 10 E2E: an operator finds a run made stuck by SIGKILLing its worker, with reclaim off (the
 * default), and repairs it from the console. The worker is a real process on a real PostgreSQL 15,
 * sharing the database with the control plane the console talks to: it takes a demo.order run's
 * first step and is SIGKILLed while the step is Running under it. The control plane's monitor then
 * finds the step's owner gone (ADR 0010) and the run stuck; a kick from the run page reclaims the
 * step, the control plane's own worker runs it and the run completes; the audit trail has the kick.
 */
test.describe('a run whose worker was SIGKILLed', () => {
  let cluster: PgCluster | null = null;
  let worker: ProcessGroup | null = null;
  let stack: ConsoleStack | null = null;
  test.afterAll(async () => {
    await worker?.stop(0);
    await stack?.stop();
    await cluster?.stop();
  });

  test('is found stuck (owner gone), kicked from its page after a preview, completes, and the kick is in the audit trail', async ({
    page,
  }, testInfo) => {
    test.setTimeout(240_000);
    cluster = await startCluster();
    const url = await createDatabase(cluster.adminUrl, uniqueDatabaseName('e2e_stuck_run'));
    const orderId = `sigkill-${randomUUID()}`;
    const hanging = startProcessGroup(
      'hanging worker',
      join(repoRoot, 'node_modules', '.bin', 'tsx'),
      [workerScript, url, orderId],
      { cwd: join(repoRoot, 'e2e'), env: { ...process.env } },
    );
    worker = hanging;
    // Progress, not time: wait until the step is Running under the worker and the run id is printed.
    let runId = '';
    await expect
      .poll(
        () => {
          runId = /^started (\S+)$/m.exec(hanging.output())?.[1] ?? '';
          return runId !== '' && hanging.output().includes(`charging ${orderId}`);
        },
        { message: 'the worker takes the charge step', timeout: 90_000 },
      )
      .toBe(true);
    if (hanging.pid) process.kill(-hanging.pid, 'SIGKILL');
    expect(await hanging.exited).toBe('SIGKILL');

    stack = await startConsoleStack({
      label: 'postgres',
      env: {
        DATABASE_URL: url,
        SAGAFLOW_DEMO: '0',
        SAGAFLOW_MONITOR_INTERVAL_MS: '500',
        // Reclaim stays off (the default): only the dead worker's silent heartbeat makes the run stuck.
        SAGAFLOW_ENGINE_CONFIG: JSON.stringify({
          worker: { poll_interval_ms: 100, heartbeat_interval_ms: 200, dead_after_seconds: 2 },
        }),
      },
    });
    const { baseUrl, sessionCookie } = stack;
    await page.context().addCookies([{ name: 'sagaflow_session', value: sessionCookie, url: baseUrl }]);

    // The overview says a run is stuck and links to the stuck runs, where this one is listed.
    await page.goto(`${baseUrl}/`);
    const stuck = page.getByTestId('attention-stuck');
    await expect(stuck).toHaveAttribute('data-count', '1', { timeout: 60_000 });
    await stuck.getByRole('link').click();
    await expect(page).toHaveURL(/\/runs\?status=stuck/);
    const row = page.getByTestId('run-row').filter({ hasText: orderId });
    await expect(row).toContainText('owner_gone');
    await saveScreenshot(page, testInfo, 'stuck-runs-list');
    await page.goto(`${baseUrl}/runs/${runId}`);

    // Its page leads with the reason, naming the step and the gone worker.
    const banner = page.getByTestId('stuck-banner');
    await expect(banner.getByTestId('stuck-reason')).toContainText(/^owner_gone: step 1 \(demo\.charge-card\)/);
    await expect(page.getByTestId('run-status')).toHaveText('Running');
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

    await page.goto(`${baseUrl}/audit?target=${runId}`);
    const kick = page.getByTestId('audit-entry').filter({ hasText: 'run.kick' });
    await expect(kick).toHaveCount(1);
    await expect(kick).toContainText('applied');
    await expect(kick).toContainText('the worker machine died mid-charge');
    await expect(kick).toContainText('admin');
  });
});
