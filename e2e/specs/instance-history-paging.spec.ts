import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDatabase, startCluster, uniqueDatabaseName, type PgCluster } from '@sagaflow/test-postgres';
import { expectNoSeriousAxeViolation, saveScreenshot } from '../fixtures/page-checks.ts';
import { startConsoleOnPostgres } from '../fixtures/postgres-worker-stack.ts';
import { startProcessGroup } from '../fixtures/process-group.ts';
import type { ConsoleStack } from '../fixtures/start-console-stack.ts';
import { expect, test } from '../fixtures/test.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const seeder = fileURLToPath(new URL('../fixtures/noted-instance-seeder.ts', import.meta.url));

/**
 * Issue 10 / ADR 0035 in the browser: an instance whose history is longer than one page (its payment
 * and 120 customer notes, 121 transitions, written by the real engine on a real PostgreSQL 15) opens
 * on its newest 50 transitions, and "Load older transitions" reaches the first, each once, in order.
 */
test.describe('an instance with more transitions than one page', () => {
  let cluster: PgCluster | null = null;
  let stack: ConsoleStack | null = null;
  test.afterAll(async () => {
    await stack?.stop();
    await cluster?.stop();
  });

  test('opens on the newest 50 transitions; “Load older transitions” reaches the first, each once', async ({
    page,
  }, testInfo) => {
    test.setTimeout(240_000);
    cluster = await startCluster();
    const url = await createDatabase(cluster.adminUrl, uniqueDatabaseName('e2e_instance_paging'));
    const orderId = randomUUID();
    const notes = 120;
    const run = startProcessGroup(
      'noted instance',
      join(repoRoot, 'node_modules', '.bin', 'tsx'),
      [seeder, url, orderId, String(notes)],
      { cwd: join(repoRoot, 'e2e'), env: process.env },
    );
    expect(await run.exited, run.output()).toBe('0');
    const instanceId = /^instance (\S+)$/m.exec(run.output())?.[1];
    expect(instanceId, run.output()).toMatch(/^[0-9a-f-]{36}$/);

    stack = await startConsoleOnPostgres(url);
    await page.context().addCookies([{ name: 'sagaflow_session', value: stack.sessionCookie, url: stack.baseUrl }]);
    await page.goto(`${stack.baseUrl}/instances/${instanceId}`);
    const rows = page.getByTestId('history-row');
    const shownMessageIds = () => rows.locator('td:nth-child(2) code').allTextContents();
    const note = (n: number) => `note-${n}-${orderId}`;

    await expect(page.getByTestId('older-transitions')).toContainText('Showing the newest 50 transitions');
    expect(await shownMessageIds()).toEqual(Array.from({ length: 50 }, (_, i) => note(notes - 49 + i)));
    await saveScreenshot(page, testInfo, 'instance-history-newest-page');

    for (let clicks = 0; (await page.getByTestId('load-older-transitions').count()) > 0; clicks++) {
      expect(clicks, 'Load older transitions never ends').toBeLessThan(5);
      const before = await rows.count();
      await page.getByTestId('load-older-transitions').click();
      await expect(rows).not.toHaveCount(before);
    }
    await expect(page.getByTestId('all-transitions')).toHaveText(`All ${notes + 1} transitions shown.`);
    expect(await shownMessageIds()).toEqual([
      `pay-${orderId}`,
      ...Array.from({ length: notes }, (_, i) => note(i + 1)),
    ]);
    await expectNoSeriousAxeViolation(page);
  });
});
