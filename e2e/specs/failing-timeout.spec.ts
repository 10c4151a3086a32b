import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDatabase, startCluster, uniqueDatabaseName, type PgCluster } from '@sagaflow/test-postgres';
import { expectNoSeriousAxeViolation } from '../fixtures/page-checks.ts';
import { startConsoleOnPostgres } from '../fixtures/postgres-worker-stack.ts';
import { startProcessGroup } from '../fixtures/process-group.ts';
import type { ConsoleStack } from '../fixtures/start-console-stack.ts';
import { expect, test } from '../fixtures/test.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const seeder = fileURLToPath(new URL('../fixtures/failing-timeout-seeder.ts', import.meta.url));
const error = 'e2e payments route refused the refund: 503 Service Unavailable';

/**
 * ADR 0127 in the browser: an instance whose timeout keeps failing (written by the real engine and its
 * real timeout pass on PostgreSQL 15) has no failure record (seed 002), yet the instances table says
 * what it is failing on, "Failing only" lists it and not its healthy neighbour, its page says so, and
 * the overview counts it.
 */
test.describe('an instance whose timeout keeps failing', () => {
  let cluster: PgCluster | null = null;
  let stack: ConsoleStack | null = null;
  test.afterAll(async () => {
    await stack?.stop();
    await cluster?.stop();
  });

  test('is shown failing in the list, found by "Failing only", explained on its page, and counted on the overview', async ({
    page,
  }) => {
    test.setTimeout(240_000);
    cluster = await startCluster();
    const url = await createDatabase(cluster.adminUrl, uniqueDatabaseName('e2e_failing_timeout'));
    const run = startProcessGroup(
      'failing timeout',
      join(repoRoot, 'node_modules', '.bin', 'tsx'),
      [seeder, url, randomUUID().slice(0, 8)],
      { cwd: join(repoRoot, 'e2e'), env: process.env },
    );
    expect(await run.exited, run.output()).toBe('0');
    const failingId = /^failing (\S+)$/m.exec(run.output())?.[1] ?? '';
    const healthyId = /^healthy (\S+)$/m.exec(run.output())?.[1] ?? '';
    expect(failingId, run.output()).toMatch(/^[0-9a-f-]{36}$/);
    expect(healthyId, run.output()).toMatch(/^[0-9a-f-]{36}$/);

    stack = await startConsoleOnPostgres(url);
    await page.context().addCookies([{ name: 'sagaflow_session', value: stack.sessionCookie, url: stack.baseUrl }]);

    await page.goto(`${stack.baseUrl}/`);
    const failingItem = page.getByTestId('attention-failing');
    await expect(failingItem).toHaveAttribute('data-count', '1');
    await expect(failingItem.getByRole('link')).toHaveAttribute('href', '/instances?failing=1');

    await page.goto(`${stack.baseUrl}/instances`);
    const rows = page.getByTestId('instance-row');
    await expect(rows).toHaveCount(2);
    const failingRow = page.locator(`[data-testid="instance-row"][data-instance-id="${failingId}"]`);
    await expect(failingRow).toHaveClass(/row-stuck/);
    await expect(failingRow.getByTestId('failing-timeout-summary')).toContainText(error);
    await expect(failingRow.getByTestId('failing-timeout-summary')).toContainText('on timeout ShipmentTimeout');
    const healthyRow = page.locator(`[data-testid="instance-row"][data-instance-id="${healthyId}"]`);
    await expect(healthyRow).not.toHaveClass(/row-stuck/);

    await page.getByTestId('failing-only').check();
    await expect(page).toHaveURL(/\/instances\?failing=1$/);
    await expect(rows).toHaveCount(1);
    await expect(rows.first()).toHaveAttribute('data-instance-id', failingId);
    await expectNoSeriousAxeViolation(page);
    // Back undoes the filter, as every list filter does.
    await page.goBack();
    await expect(rows).toHaveCount(2);

    await page.goto(`${stack.baseUrl}/instances/${failingId}`);
    const banner = page.getByTestId('failing-timeout-banner');
    await expect(banner.getByRole('heading')).toHaveText('Failing: a timeout keeps failing on this instance');
    await expect(banner).toContainText('ShipmentTimeout');
    await expect(banner.getByTestId('failing-timeout-error')).toHaveText(error);
    await expect(page.getByTestId('failure-banner')).toHaveCount(0);
  });
});
