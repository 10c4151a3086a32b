import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { createDatabase, startCluster, uniqueDatabaseName, type PgCluster } from '@sagaflow/test-postgres';
import { saveScreenshot } from '../fixtures/page-checks.ts';
import { holdRunInPsql, startParkedReservation, type HeldByPsql } from '../fixtures/held-run.ts';
import { startConsoleOnPostgres } from '../fixtures/postgres-worker-stack.ts';
import type { ConsoleStack } from '../fixtures/start-console-stack.ts';
import { expect, test } from '../fixtures/test.ts';

/**
 * Review 56, review 55's leftover (ADR 0130): a call that gets no database connection in time is a 503
 * that says so ("the database gave the control plane no connection in time ... nothing was done; try
 * again in a moment"). Here in real Chromium on a real PostgreSQL: every connection of the control
 * plane's pool is taken by repairs waiting on a run's row a psql session keeps (each waits up to half
 * of `processes.transaction_timeout_ms`, 30 s here), and an operator opens the runs list. Expected: the
 * page says the database is busy and to try again, not a blank page, a generic error or an empty list.
 */
test.describe('the console while the control plane has no database connection to give', () => {
  let cluster: PgCluster | null = null;
  let stack: ConsoleStack | null = null;
  let psql: HeldByPsql | null = null;
  const inFlight: Promise<unknown>[] = [];
  test.afterAll(async () => {
    psql?.kill();
    await Promise.allSettled(inFlight);
    await stack?.stop();
    await cluster?.stop();
  });

  test('the runs list says the database gave no connection in time and to try again', async ({ page }, testInfo) => {
    test.setTimeout(240_000);
    cluster = await startCluster();
    const url = await createDatabase(cluster.adminUrl, uniqueDatabaseName('e2e_r56_noconn'));
    stack = await startConsoleOnPostgres(url, { processes: { transaction_timeout_ms: 60_000 } });
    const { baseUrl, sessionCookie } = stack;
    const runId = await startParkedReservation(baseUrl, sessionCookie);
    psql = await holdRunInPsql(url, runId);
    // Twelve kicks of that run (the pool has ten connections): each waits on the row with its connection.
    for (let i = 0; i < 12; i++)
      inFlight.push(
        fetch(`${baseUrl}/api/trpc/repairs.applyOne`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: baseUrl, cookie: `sagaflow_session=${sessionCookie}` },
          body: JSON.stringify({
            kind: 'run.kick',
            target: { runId },
            expected: { runStatus: 'Waiting' },
            reason: `r56 kick ${i}`,
            idempotencyKey: randomUUID(),
          }),
        }).then((r) => r.status),
      );
    // Wait until the database shows them waiting on the row (ten: the pool's size).
    const waiting = () =>
      new Promise<number>((resolve) => {
        const q = spawn('/usr/lib/postgresql/15/bin/psql', [
          '-X',
          '-q',
          '-A',
          '-t',
          url,
          '-c',
          "select count(*) from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()",
        ]);
        let o = '';
        q.stdout.on('data', (d: Buffer) => (o += d.toString()));
        q.on('exit', () => resolve(Number(o.trim())));
      });
    await expect.poll(waiting, { timeout: 20_000 }).toBeGreaterThanOrEqual(10);

    await page.context().addCookies([{ name: 'sagaflow_session', value: sessionCookie, url: baseUrl }]);
    await page.goto(`${baseUrl}/runs`);
    const main = page.locator('main');
    await expect(main).toContainText(/no connection in time.*nothing was done; try again/, { timeout: 25_000 });
    await saveScreenshot(page, testInfo, 'r56-no-connection');
    const said = (await main.textContent()) ?? '';
    // Not an empty list: the page must not say there are no runs.
    expect(said, said).not.toMatch(/no runs/i);
    await psql.letGo();
  });
});
