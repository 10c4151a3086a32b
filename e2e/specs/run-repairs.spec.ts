import { randomUUID } from 'node:crypto';
import type { APIRequestContext, Page } from '@playwright/test';
import { storageStatePath } from '../fixtures/accounts.ts';
import { expect, startWaitingReservation, test } from '../fixtures/test.ts';

/** Opens a waiting run's page and drafts a cancel against the status it shows; returns the run and the draft. */
async function draftCancel(page: Page, request: APIRequestContext) {
  const runId = await startWaitingReservation(request);
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Waiting');
  await page.getByTestId('repair-run.cancel').click();
  const draft = page.getByTestId('repair-draft');
  await expect(draft).toContainText('drafted against status Waiting');
  await expect(draft.getByTestId('repair-preview')).toBeVisible();
  return { runId, draft };
}

test('an operator cancels a waiting run from its page: preview, reason, apply; the run records the repair', async ({
  page,
  request,
}) => {
  const { draft } = await draftCancel(page, request);
  await draft.getByTestId('repair-reason').fill('customer called to cancel');
  await draft.getByTestId('repair-apply').click();

  await expect(draft.getByTestId('repair-applied')).toBeVisible();
  await expect(page.getByTestId('events-timeline')).toContainText('repair.applied');
});

test('a repair drafted against a status that has moved says the run changed and what it is now', async ({
  page,
  request,
  baseURL,
  playwright,
}) => {
  const { runId, draft } = await draftCancel(page, request);

  // Another operator terminates the run behind the page's back (terminate waits for a second
  // operator under the default approval policy: the admin approves it).
  const other = await request.post(`${baseURL}/api/trpc/repairs.applyOne`, {
    data: {
      kind: 'run.terminate',
      target: { runId },
      expected: { runStatus: 'Waiting' },
      reason: 'someone else got there first',
      idempotencyKey: randomUUID(),
    },
  });
  expect(other.status(), await other.text()).toBe(200);
  const { approvalId } = ((await other.json()) as { result: { data: { approvalId: string } } }).result.data;
  const admin = await playwright.request.newContext({ storageState: storageStatePath('admin') });
  const approved = await admin.post(`${baseURL}/api/trpc/approvals.approve`, { data: { id: approvalId } });
  expect(approved.status(), await approved.text()).toBe(200);
  await admin.dispose();

  await draft.getByTestId('repair-reason').fill('too late');
  await draft.getByTestId('repair-apply').click();
  await expect(draft.getByTestId('repair-conflict')).toContainText('The run changed: now Terminated');
  // A finished run is never changed: there is nothing to redraft it against.
  await expect(draft.getByTestId('repair-no-redraft')).toContainText('It cannot be redrafted: it is Terminated');
  await expect(draft.getByTestId('repair-redraft')).toHaveCount(0);
});

test.describe('a viewer', () => {
  test.use({ storageState: storageStatePath('viewer') });

  test('sees no repair buttons on an open run', async ({ page, playwright }) => {
    const operator = await playwright.request.newContext({ storageState: storageStatePath('operator') });
    const runId = await startWaitingReservation(operator);
    await operator.dispose();
    await page.goto(`/runs/${runId}`);
    await expect(page.getByTestId('signed-in-role')).toHaveText('viewer');
    await expect(page.getByTestId('run-status')).toHaveText('Waiting');
    await expect(page.getByTestId('run-repairs')).toHaveCount(0);
  });
});
