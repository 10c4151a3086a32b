import { randomUUID } from 'node:crypto';
import type { APIRequestContext, Page } from '@playwright/test';
import { expectNoSeriousAxeViolation, saveScreenshot } from '../fixtures/page-checks.ts';
import { expect, startWaitingReservation, test } from '../fixtures/test.ts';

/** Resolves once the run page has polled the control plane again (a real refresh, not a sleep). */
const nextRefresh = (page: Page) => page.waitForResponse((r) => r.url().includes('/api/trpc/runs.'));

/** The audit trail's repair rows for one run, through the console's own API. */
async function repairAuditRows(request: APIRequestContext, baseURL: string, runId: string) {
  const input = encodeURIComponent(JSON.stringify({ source: 'repair', target: runId, limit: 50 }));
  const res = await request.get(`${baseURL}/api/trpc/audit.page?input=${input}`);
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { result: { data: { items: { action: string; outcome: string }[] } } }).result.data
    .items;
}

test('what an operator types in the signal form and a draft’s reason survives the page’s refreshes', async ({
  page,
  request,
}) => {
  const runId = await startWaitingReservation(request);
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Waiting');
  await page.getByTestId('signal-name').fill('confirm');
  await page.getByTestId('signal-payload').fill('{"by": "phone", "note": "half typed');
  await page.getByTestId('repair-run.cancel').click();
  const draft = page.getByTestId('repair-draft');
  await draft.getByTestId('repair-reason').fill('customer called');
  for (let i = 0; i < 3; i++) await nextRefresh(page);
  await expect(page.getByTestId('signal-name')).toHaveValue('confirm');
  await expect(page.getByTestId('signal-payload')).toHaveValue('{"by": "phone", "note": "half typed');
  await expect(page.getByTestId('signal-payload-state')).toContainText('not JSON');
  await expect(draft.getByTestId('repair-reason')).toHaveValue('customer called');
  await expect(draft.getByTestId('repair-reason')).toBeFocused();
});

test('keyboard only: tab to Cancel, open it, type a reason, Enter twice; one effect, one audit row, a plain result', async ({
  page,
  request,
  baseURL,
}) => {
  const runId = await startWaitingReservation(request);
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Waiting');
  const cancel = page.getByTestId('repair-run.cancel');
  // Tab from the page's start until the Cancel button has the focus (no mouse).
  await page.locator('body').focus();
  for (let i = 0; i < 60; i++) {
    if (await cancel.evaluate((el) => el === document.activeElement)) break;
    await page.keyboard.press('Tab');
  }
  await expect(cancel).toBeFocused();
  await page.keyboard.press('Enter');
  const draft = page.getByTestId('repair-draft');
  await expect(draft.getByTestId('repair-preview')).toBeVisible();
  // Tab on to the reason field.
  const reason = draft.getByTestId('repair-reason');
  for (let i = 0; i < 30; i++) {
    if (await reason.evaluate((el) => el === document.activeElement)) break;
    await page.keyboard.press('Tab');
  }
  await expect(reason).toBeFocused();
  await page.keyboard.type('the guest cancelled by phone');
  await expect(draft.getByTestId('repair-apply')).toBeEnabled();
  await page.keyboard.press('Enter');
  await page.keyboard.press('Enter');

  const applied = draft.getByTestId('repair-applied');
  await expect(applied).toBeVisible();
  // One effect: the operator is told it was applied, not that it was "already applied" by a second press.
  await expect(applied).not.toContainText('already applied');
  await expect(draft.getByTestId('repair-error')).toHaveCount(0);
  await expect(draft.getByTestId('repair-conflict')).toHaveCount(0);
  await expect(page.getByTestId('events-timeline').getByText('repair.applied')).toHaveCount(1);
  const rows = await repairAuditRows(request, baseURL ?? '', runId);
  expect(rows.map((r) => r.outcome)).toEqual(['applied']);
  await expectNoSeriousAxeViolation(page);
});

test('back after applying a repair shows the run as it is now, not the page before with an Apply button', async ({
  page,
  request,
}) => {
  const runId = await startWaitingReservation(request);
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Waiting');
  await page.getByTestId('repair-run.cancel').click();
  const draft = page.getByTestId('repair-draft');
  await draft.getByTestId('repair-reason').fill('review 33: back and forward');
  await draft.getByTestId('repair-apply').click();
  await expect(draft.getByTestId('repair-applied')).toBeVisible();
  await expect(page.getByTestId('run-status')).not.toHaveText('Waiting');

  await page.getByRole('link', { name: /All runs/ }).click();
  await expect(page.getByRole('heading', { name: 'Runs' })).toBeVisible();
  await page.goBack();
  await expect(page).toHaveURL(new RegExp(`/runs/${runId}$`));
  await expect(page.getByTestId('run-status')).not.toHaveText('Waiting');
  await expect(page.getByTestId('repair-apply')).toHaveCount(0);
  await expect(page.getByTestId('repair-run.cancel')).toHaveCount(0);
  await page.goForward();
  await expect(page.getByRole('heading', { name: 'Runs' })).toBeVisible();
  await page.goBack();
  await expect(page.getByTestId('run-status')).not.toHaveText('Waiting');
  await expect(page.getByTestId('events-timeline').getByText('repair.applied')).toHaveCount(1);
});

test('an open draft whose run finishes underneath says so before Apply, instead of “what it would do now” from before', async ({
  page,
  request,
  baseURL,
}, testInfo) => {
  const runId = await startWaitingReservation(request);
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Waiting');
  await page.getByTestId('repair-run.cancel').click();
  const draft = page.getByTestId('repair-draft');
  await expect(draft.getByTestId('repair-preview')).toBeVisible();
  await draft.getByTestId('repair-reason').fill('customer called to cancel');

  // The guest confirms (the engine finishes the run) while the operator is still on the draft.
  const signalled = await request.post(`${baseURL}/api/trpc/repairs.applyOne`, {
    data: {
      kind: 'run.signal',
      target: { runId },
      expected: { runStatus: 'Waiting' },
      reason: 'review 33: the guest confirmed',
      idempotencyKey: randomUUID(),
      signal: { name: 'confirm' },
    },
  });
  expect(signalled.status(), await signalled.text()).toBe(200);
  // The page has seen it: the header says Completed.
  await expect(page.getByTestId('run-status')).toHaveText('Completed');
  // Once finished, the page stops polling: give the draft the page's whole refresh interval and more.
  await expect(page.getByText('Finished · not refreshing')).toBeVisible();
  await saveScreenshot(page, testInfo, 'draft-over-finished-run');
  // The draft must not go on offering "what it would do now" against Waiting with Apply enabled.
  await expect(draft.getByTestId('repair-stale').or(draft.getByTestId('repair-no-redraft')).first()).toContainText(
    'Completed',
  );
  await expect(draft.getByTestId('repair-apply')).toBeDisabled();
});
