import { randomUUID } from 'node:crypto';
import { accounts } from '../fixtures/accounts.ts';
import { expectNoSeriousAxeViolation, expectNoSideScroll, saveScreenshot } from '../fixtures/page-checks.ts';
import { applyRepairWithApproval, savedSessionCookie } from '../fixtures/sign-in-accounts.ts';
import { expect, startWaitingReservation, test } from '../fixtures/test.ts';

test('the audit trail lists a run repair and its conflicts, filtered by target, paged with Load more, linked to the run', async ({
  page,
  request,
  baseURL,
}, testInfo) => {
  test.setTimeout(120_000);
  const runId = await startWaitingReservation(request);
  const repair = (kind: string, expected: string, reason: string) =>
    request.post('/api/trpc/repairs.applyOne', {
      data: { kind, target: { runId }, expected: { runStatus: expected }, reason, idempotencyKey: randomUUID() },
    });
  // 54 drafts against a status the run is not in (each refused as a conflict, each audited), then one
  // terminate, which the default approval policy holds until the second operator approves it.
  for (let i = 0; i < 54; i++) expect((await repair('run.cancel', 'Running', `stale draft ${i}`)).status()).toBe(409);
  await expect
    .poll(
      async () => {
        const res = await request.get(`/api/trpc/runs.get?input=${encodeURIComponent(JSON.stringify({ id: runId }))}`);
        return ((await res.json()) as { result?: { data: { run: { status: string } } } }).result?.data.run.status;
      },
      { timeout: 20_000 },
    )
    .toBe('Waiting');
  await applyRepairWithApproval(baseURL ?? '', savedSessionCookie('operator'), savedSessionCookie('approver'), {
    kind: 'run.terminate',
    target: { runId },
    expected: { runStatus: 'Waiting' },
    reason: 'audit e2e: stop it',
    idempotencyKey: randomUUID(),
  });

  await page.goto(`/audit?target=${runId}`);
  await expect(page.getByRole('heading', { level: 1, name: 'Audit trail' })).toBeVisible();
  const rows = page.getByTestId('audit-entry');
  await expect(rows).toHaveCount(50);
  const newest = rows.first();
  await expect(newest).toContainText('run.terminate');
  await expect(newest).toContainText('applied');
  await expect(newest).toContainText('audit e2e: stop it');
  await expect(newest).toContainText(accounts.operator.name);
  await page.getByTestId('load-more').click();
  // 54 conflicts, the terminate, its draft for approval (its row names the approval; the run's trail
  // follows it, ADR 0119), and the oldest: who started the run (ADR 0105).
  await expect(rows).toHaveCount(57);
  await expect(page.getByTestId('list-end')).toContainText('All 57 matching entries shown');
  const keys = await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-audit-key')));
  expect(new Set(keys).size).toBe(57);
  await expect(rows.nth(1)).toContainText('repair_drafted');
  await expect(rows.last()).toContainText('run_started');
  await expect(rows.last()).toContainText(accounts.operator.name);
  await expect(rows.filter({ hasText: 'stale draft' })).toHaveCount(54);
  await expect(rows.filter({ hasText: 'stale draft' }).filter({ hasText: 'conflict' })).toHaveCount(54);

  // The details of a refusal say what the run was; the target links to the run.
  await rows.nth(2).getByText('Details').click();
  await expect(rows.nth(2)).toContainText('Waiting');
  await saveScreenshot(page, testInfo, 'audit');
  await expectNoSeriousAxeViolation(page);
  await newest.getByTestId('audit-run-link').click();
  await expect(page).toHaveURL(new RegExp(`/runs/${runId}$`));
  await expect(page.getByTestId('run-status')).toHaveText('Terminated');
});

test('filters are a form kept in the URL: sign-ins by one operator, then back to everything', async ({ page }) => {
  await page.goto('/audit');
  const form = page.getByTestId('audit-filters');
  await form.getByTestId('filter-source').selectOption('auth');
  await form.getByTestId('filter-actor').fill(accounts.operator.name);
  await form.getByTestId('filter-actor').press('Enter');
  await expect(page).toHaveURL(new RegExp(`/audit\\?source=auth&actor=${accounts.operator.name}$`));
  const rows = page.getByTestId('audit-entry');
  // The operator's sign-ins, among its other actions of this source (runs started: ADR 0105).
  await expect(rows.filter({ hasText: 'sign_in' }).first()).toBeVisible();
  for (const text of await rows.allTextContents()) expect(text).toContain(accounts.operator.name);
  await form.getByTestId('filter-command').fill('no.such.command');
  await form.getByTestId('filter-command').press('Enter');
  await expect(page.getByTestId('audit-empty')).toContainText('Nothing in the audit trail matches this filter');
  await page.getByRole('button', { name: 'Clear' }).click();
  await expect(page).toHaveURL(/\/audit$/);
  await expect(rows.first()).toBeVisible();
});

test.describe('at 390 px wide', () => {
  test.use({ viewport: { width: 390, height: 844 } });
  test('the audit trail does not scroll sideways', async ({ page }) => {
    await page.goto('/audit');
    await expect(page.getByTestId('audit-entry').first()).toBeVisible();
    await expectNoSideScroll(page);
  });
});
