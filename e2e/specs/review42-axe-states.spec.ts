import { randomUUID } from 'node:crypto';
import { storageStatePath } from '../fixtures/accounts.ts';
import { expectNoSeriousAxeViolation } from '../fixtures/page-checks.ts';
import { mutateViaConsole, savedSessionCookie } from '../fixtures/sign-in-accounts.ts';
import { expect, startWaitingReservation, test } from '../fixtures/test.ts';

/**
 * Review 42 (held): axe finds no serious or critical violation in states the other specs do not scan:
 * the Account page showing a refusal, sign-in after a session ended, a run id that names no run, a
 * filtered runs list with nothing in it, and the approvals queue as the second operator sees it, with a
 * rejection being written.
 */
test('the Account page with a refused change has no serious axe violation', async ({ page }) => {
  await page.goto('/account');
  await page.getByLabel('Current password').fill('not the password of this one');
  await page.getByLabel('New password', { exact: true }).fill('some new password here');
  await page.getByLabel('Repeat the new password').fill('another new password');
  await page.getByRole('button', { name: 'Change password' }).click();
  await expect(page.getByTestId('change-password-error')).toHaveText('The two new passwords differ.');
  await expectNoSeriousAxeViolation(page);
});

test('a run id that names no run, and an empty filtered list, have no serious axe violation', async ({ page }) => {
  await page.goto(`/runs/${randomUUID()}`);
  await expect(page.locator('main')).toContainText('Run not found');
  await expectNoSeriousAxeViolation(page);
  await page.goto(`/runs?status=Failed&q=${randomUUID()}`);
  await expect(page.getByTestId('runs-empty')).toBeVisible();
  await expectNoSeriousAxeViolation(page);
});

test.describe('signed out', () => {
  test.use({ storageState: { cookies: [], origins: [] } });
  test('sign-in after a session ended has no serious axe violation', async ({ page }) => {
    await page.goto('/sign-in?next=%2Fruns&ended=1');
    await expect(page.getByText('Your session has ended')).toBeVisible();
    await expectNoSeriousAxeViolation(page);
  });
});

test.describe('the approver', () => {
  test.use({ storageState: storageStatePath('approver') });
  test('the approvals queue with a rejection being written has no serious axe violation', async ({ page, baseURL }) => {
    const runId = await startWaitingReservation(page.request);
    await mutateViaConsole(baseURL ?? '', savedSessionCookie('operator'), 'repairs.applyOne', {
      kind: 'run.terminate',
      target: { runId },
      expected: { runStatus: 'Waiting' },
      reason: 'review 42 axe on the queue',
      idempotencyKey: randomUUID(),
    });
    await page.goto('/approvals');
    const card = page.getByTestId('approval').filter({ hasText: runId.slice(0, 8) });
    await expect(card.getByTestId('approval-preview')).toContainText('Terminated');
    await card.getByTestId('approval-reject').click();
    await expect(card.getByTestId('approval-reject-reason')).toBeVisible();
    await expectNoSeriousAxeViolation(page);
  });
});
