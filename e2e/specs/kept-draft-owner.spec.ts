import type { APIRequest } from '@playwright/test';
import { storageStatePath } from '../fixtures/accounts.ts';
import { expectNoSeriousAxeViolation } from '../fixtures/page-checks.ts';
import { countCalls, endSessionsElsewhere, keptDraftKeys, newOperator, signInOnPage } from '../fixtures/session-end.ts';
import { savedSessionCookie } from '../fixtures/sign-in-accounts.ts';
import { expect, startWaitingReservation, test } from '../fixtures/test.ts';

/**
 * ADR 0120: the sign-in page names whose repair draft a session ended with, and another operator signing
 * in on the tab is not offered it and does not leave it kept (it is dropped); a bulk draft on the runs
 * list is kept, announced and offered back like a run's draft (ADR 0117 decision 2).
 */
test.use({ storageState: { cookies: [], origins: [] } });

async function waitingRun(playwright: { request: APIRequest }): Promise<string> {
  const operator = await playwright.request.newContext({ storageState: storageStatePath('operator') });
  try {
    return await startWaitingReservation(operator);
  } finally {
    await operator.dispose();
  }
}

test('sign-in names whose draft is kept; another operator signing in is not offered it, and it is dropped', async ({
  page,
  baseURL,
  playwright,
}) => {
  const base = baseURL ?? '';
  const owner = await newOperator(base, savedSessionCookie('admin'), 'e2e-owner');
  const other = await newOperator(base, savedSessionCookie('admin'), 'e2e-other');
  const runId = await waitingRun(playwright);

  await page.goto(`/sign-in?next=${encodeURIComponent(`/runs/${runId}`)}`);
  await signInOnPage(page, owner.name, owner.first);
  await expect(page.getByTestId('run-status')).toHaveText('Waiting');
  await page.getByTestId('repair-run.cancel').click();
  const draft = page.getByTestId('repair-draft');
  await expect(draft.getByTestId('repair-preview')).toBeVisible();
  await draft.getByTestId('repair-reason').fill('the owner’s words, ticket 4413');

  await endSessionsElsewhere(base, owner.name, owner.first, owner.second);
  await page.waitForURL(/\/sign-in\?/, { timeout: 30_000 });
  const notice = page.getByTestId('sign-in-notice');
  await expect(notice).toContainText(`The repair draft ${owner.name} had open was not applied`);
  await expect(notice).toContainText(`after ${owner.name} signs in again`);
  await expect(notice).not.toContainText('you had open');
  await expectNoSeriousAxeViolation(page);

  // Someone else signs in on this tab: back on the run's page, nothing is offered to them, nothing was
  // applied, and the owner's draft (and reason) is no longer kept in the tab.
  await signInOnPage(page, other.name, other.first);
  await page.waitForURL(new RegExp(`/runs/${runId}$`));
  await expect(page.getByTestId('signed-in-name')).toHaveText(other.name);
  await expect(page.getByTestId('run-repairs')).toBeVisible();
  await expect(page.getByTestId('repair-draft')).toHaveCount(0);
  await expect(page.getByTestId('run-status')).toHaveText('Waiting');
  expect(await keptDraftKeys(page)).toEqual([]);

  // The owner signs in again on the tab afterwards: the draft is gone, not offered.
  await page.context().clearCookies();
  await page.goto(`/sign-in?next=${encodeURIComponent(`/runs/${runId}`)}`);
  await expect(page.getByTestId('sign-in-notice')).toHaveCount(0);
  await signInOnPage(page, owner.name, owner.second);
  await page.waitForURL(new RegExp(`/runs/${runId}$`));
  await expect(page.getByTestId('signed-in-name')).toHaveText(owner.name);
  await expect(page.getByTestId('run-repairs')).toBeVisible();
  await expect(page.getByTestId('repair-draft')).toHaveCount(0);
});

test('a bulk draft on the runs list open when the session ends is announced, offered again as typed, and applied once', async ({
  page,
  baseURL,
  playwright,
}) => {
  const base = baseURL ?? '';
  const { name, first, second } = await newOperator(base, savedSessionCookie('admin'));
  const runId = await waitingRun(playwright);
  const list = `/runs?status=Waiting`;
  const row = page.locator(`[data-testid="run-row"][data-run-id="${runId}"]`);

  await page.goto(`/sign-in?next=${encodeURIComponent(list)}`);
  await signInOnPage(page, name, first);
  await row.getByTestId('run-select').check();
  await page.getByTestId('bulk-kind').selectOption('run.cancel');
  await page.getByTestId('bulk-preview').click();
  const bulk = page.getByTestId('bulk-draft');
  await expect(bulk.getByTestId('bulk-item-preview')).toHaveText('would apply');
  const reason = 'bulk: the customer cancelled, ticket 4414';
  await bulk.getByTestId('bulk-reason').fill(reason);

  await endSessionsElsewhere(base, name, first, second);
  await page.waitForURL(/\/sign-in\?/, { timeout: 30_000 });
  await expect(page.getByTestId('sign-in-notice')).toContainText(`The repair draft ${name} had open was not applied`);

  await signInOnPage(page, name, second);
  await page.waitForURL((u) => u.pathname === '/runs' && u.searchParams.get('status') === 'Waiting');
  await expect(bulk.getByTestId('repair-restored')).toContainText('none of it was applied');
  await expect(bulk.getByTestId('bulk-item')).toHaveCount(1);
  await expect(bulk.getByTestId('bulk-item')).toHaveAttribute('data-target-id', runId);
  await expect(bulk.getByTestId('bulk-reason')).toHaveValue(reason);
  await expect(bulk.getByTestId('bulk-reason')).toBeFocused();
  // Previewed again, not applied: the run is still Waiting.
  await expect(bulk.getByTestId('bulk-item-preview')).toHaveText('would apply');
  await expect(row).toContainText('Waiting');
  await expectNoSeriousAxeViolation(page);

  const applies = countCalls(page, 'repairs.applyBulk');
  await bulk.getByTestId('bulk-apply').click();
  await expect(bulk.getByTestId('bulk-applied')).toContainText('Applied to 1 of 1');
  expect(applies()).toBe(1);

  // Applied: nothing is kept, so a reload shows no bulk draft.
  await page.reload();
  await expect(page.getByTestId('runs-empty').or(page.getByTestId('run-row').first())).toBeVisible();
  await expect(page.getByTestId('bulk-draft')).toHaveCount(0);
  expect(await keptDraftKeys(page)).toEqual([]);
});

test('a bulk draft left open by reloading the list is not offered again', async ({ page, baseURL, playwright }) => {
  const base = baseURL ?? '';
  const { name, first } = await newOperator(base, savedSessionCookie('admin'));
  const runId = await waitingRun(playwright);
  await page.goto(`/sign-in?next=${encodeURIComponent('/runs?status=Waiting')}`);
  await signInOnPage(page, name, first);
  await page.locator(`[data-testid="run-row"][data-run-id="${runId}"]`).getByTestId('run-select').check();
  await page.getByTestId('bulk-kind').selectOption('run.cancel');
  await page.getByTestId('bulk-preview').click();
  await page.getByTestId('bulk-draft').getByTestId('bulk-reason').fill('typed, then the list was reloaded');
  expect(await keptDraftKeys(page)).toHaveLength(1);
  await page.reload();
  await expect(page.locator(`[data-testid="run-row"][data-run-id="${runId}"]`)).toBeVisible();
  await expect(page.getByTestId('bulk-draft')).toHaveCount(0);
  expect(await keptDraftKeys(page)).toEqual([]);
});
