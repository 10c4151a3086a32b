import { storageStatePath } from '../fixtures/accounts.ts';
import {
  countCalls,
  endSessionsElsewhere,
  keptDraftKeys,
  newOperator,
  signInOnPage as signIn,
} from '../fixtures/session-end.ts';
import { savedSessionCookie } from '../fixtures/sign-in-accounts.ts';
import { expect, startWaitingReservation, test } from '../fixtures/test.ts';

/**
 * ADR 0120 addendum (review 51, D5): a kept draft is offered back only after the server said its
 * idempotency key was never used. A tab opened from the tab that kept it holds a copy (same key); once the
 * first tab applied it, the second names who applied it and when, links its audit row, keeps nothing, and
 * cannot apply it again.
 */
test.use({ storageState: { cookies: [], origins: [] } });

test('a kept draft applied in one tab is named as applied, by whom, in a tab opened from it', async ({
  page,
  baseURL,
  playwright,
}) => {
  const base = baseURL ?? '';
  const { name, first, second } = await newOperator(base, savedSessionCookie('admin'), 'e2e-kept-two-tabs');
  const operator = await playwright.request.newContext({ storageState: storageStatePath('operator') });
  const runId = await startWaitingReservation(operator);
  await operator.dispose();
  const reason = `customer cancelled by phone, ticket ${runId.slice(0, 8)}`;

  await page.goto(`/sign-in?next=${encodeURIComponent(`/runs/${runId}`)}`);
  await signIn(page, name, first);
  await expect(page.getByTestId('run-status')).toHaveText('Waiting');
  await page.getByTestId('repair-run.cancel').click();
  const draftA = page.getByTestId('repair-draft');
  await expect(draftA.getByTestId('repair-preview')).toBeVisible();
  await draftA.getByTestId('repair-reason').fill(reason);

  await endSessionsElsewhere(base, name, first, second);
  await page.waitForURL(/\/sign-in\?/, { timeout: 30_000 });
  const [tabB] = await Promise.all([
    page.waitForEvent('popup'),
    page.evaluate((url) => window.open(url, '_blank'), `/runs/${runId}`),
  ]);
  await tabB.waitForURL(/\/sign-in\?/, { timeout: 30_000 });
  expect(await keptDraftKeys(tabB), 'the new tab holds a copy of the kept draft').not.toEqual([]);

  // First tab: the key was never used, so it says "not applied"; apply it once.
  await signIn(page, name, second);
  await page.waitForURL(new RegExp(`/runs/${runId}$`));
  await expect(draftA.getByTestId('repair-restored')).toHaveAttribute('data-key-use', 'unused');
  await expect(draftA.getByTestId('repair-restored')).toContainText('it was not applied');
  await draftA.getByTestId('repair-apply').click();
  await expect(draftA.getByTestId('repair-applied')).toBeVisible();

  // Second tab: the same draft (same key) is named as applied, by this operator, and not offered again.
  const appliesB = countCalls(tabB, 'repairs.applyOne');
  await tabB.goto(`/runs/${runId}`);
  const draftB = tabB.getByTestId('repair-draft');
  const noticeB = draftB.getByTestId('repair-restored');
  await expect(noticeB).toHaveAttribute('data-key-use', 'used');
  await expect(noticeB).toContainText(`This draft was applied at `);
  await expect(noticeB).toContainText(` by ${name}.`);
  await expect(noticeB).not.toContainText('not applied');
  await expect(draftB.getByTestId('repair-apply')).toBeDisabled();
  expect(await keptDraftKeys(tabB), 'the applied draft is no longer kept in the second tab').toEqual([]);

  // Its link shows the audit row of that apply: this operator, this reason, applied.
  await noticeB.getByTestId('repair-restored-link').click();
  await tabB.waitForURL(/\/audit\?/);
  const entry = tabB.getByTestId('audit-entry').filter({ hasText: reason });
  await expect(entry).toHaveCount(1);
  await expect(entry).toContainText(name);
  await expect(entry).toContainText('applied');

  // Back on the run, nothing is offered again, and the second tab never sent an apply.
  await tabB.goto(`/runs/${runId}`);
  await expect(tabB.getByTestId('run-status')).not.toHaveText('Waiting');
  await expect(tabB.getByTestId('repair-draft')).toHaveCount(0);
  expect(appliesB()).toBe(0);
});
