import { randomUUID } from 'node:crypto';
import { createDatabase, startCluster, uniqueDatabaseName, type PgCluster } from '@sagaflow/test-postgres';
import { saveScreenshot } from '../fixtures/page-checks.ts';
import { accounts } from '../fixtures/accounts.ts';
import { holdRunInPsql, startParkedReservation, type HeldByPsql } from '../fixtures/held-run.ts';
import { startConsoleOnPostgres } from '../fixtures/postgres-worker-stack.ts';
import { mutateViaConsole, queryViaConsole, signInViaConsole } from '../fixtures/sign-in-accounts.ts';
import type { ConsoleStack } from '../fixtures/start-console-stack.ts';
import { expect, test } from '../fixtures/test.ts';

/**
 * Review 56 (ADR 0132 §1 with ADR 0020/0121), in real Chromium on a real PostgreSQL. A gated bulk
 * cancel of two waiting runs is approved by a second admin from the approvals page while a psql session
 * keeps the second run's row. The engine applies the first, answers `target_busy` for the second
 * (reported as item outcome `failed`), and settles the approval `applied`. Expected: the approver is
 * told that one of the two was not applied (its run was busy), not only that the bulk "is applied".
 */
test.describe('approving a bulk whose second run another session holds', () => {
  let cluster: PgCluster | null = null;
  let stack: ConsoleStack | null = null;
  let psql: HeldByPsql | null = null;
  test.afterAll(async () => {
    psql?.kill();
    await stack?.stop();
    await cluster?.stop();
  });

  test('the approver is told which run was busy and not cancelled', async ({ page }, testInfo) => {
    test.setTimeout(240_000);
    cluster = await startCluster();
    const url = await createDatabase(cluster.adminUrl, uniqueDatabaseName('e2e_r56_bulk_busy'));
    stack = await startConsoleOnPostgres(url, { processes: { transaction_timeout_ms: 2000 } });
    const { baseUrl, sessionCookie } = stack;
    const { name, password } = accounts.secondAdmin;
    await mutateViaConsole(baseUrl, sessionCookie, 'operators.create', {
      name,
      displayName: name,
      role: 'admin',
      password,
    });
    const approverCookie = await signInViaConsole(baseUrl, 'secondAdmin');
    await mutateViaConsole(baseUrl, sessionCookie, 'approvalPolicy.set', {
      gatedCommands: ['run.cancel'],
      bulkThreshold: null,
    });

    const runIds = [
      await startParkedReservation(baseUrl, sessionCookie),
      await startParkedReservation(baseUrl, sessionCookie),
    ];
    const status = async (id: string) =>
      (await queryViaConsole<{ run: { status: string } }>(baseUrl, sessionCookie, 'runs.get', { id })).run.status;
    const drafted = (await mutateViaConsole(baseUrl, sessionCookie, 'repairs.applyBulk', {
      kind: 'run.cancel',
      reason: 'r56 customers cancelled',
      idempotencyKey: randomUUID(),
      items: runIds.map((runId) => ({ target: { runId }, expected: { runStatus: 'Waiting' } })),
    })) as { result: { data: { status: string; approvalId: string } } };
    expect(drafted.result.data.status).toBe('awaiting_approval');
    const approvalId = drafted.result.data.approvalId;

    // A psql session keeps the second run's row.
    const busy = runIds[1]!;
    psql = await holdRunInPsql(url, busy);

    await page.context().addCookies([{ name: 'sagaflow_session', value: approverCookie, url: baseUrl }]);
    await page.goto(`${baseUrl}/approvals?id=${approvalId}#approval-${approvalId}`);
    const card = page.locator(`[data-testid="approval"][data-approval-id="${approvalId}"]`).first();
    await card.getByTestId('approval-approve').click();
    const outcome = page.getByTestId('approval-outcome').or(card.getByTestId('approval-error')).first();
    await expect(outcome).toBeVisible({ timeout: 30_000 });
    await saveScreenshot(page, testInfo, 'r56-approved-bulk-busy-item');
    const said = (await page.locator('main').textContent()) ?? '';
    await psql.letGo();
    const statuses = [await status(runIds[0]!), await status(busy)];
    expect(statuses[0]).toMatch(/Cancel|Compensat/);
    // The page tells the approver the busy run was not cancelled.
    expect(
      said,
      `runs now ${statuses.join(', ')}; the approvals page said: ${(await outcome.textContent()) ?? ''}`,
    ).toMatch(new RegExp(`${busy}|1 of 2|not applied|busy|another session`));
  });
});
