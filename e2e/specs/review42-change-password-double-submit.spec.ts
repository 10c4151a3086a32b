import { randomUUID } from 'node:crypto';
import { mutateViaConsole, savedSessionCookie } from '../fixtures/sign-in-accounts.ts';
import { expect, test } from '../fixtures/test.ts';

/**
 * Review 42: an operator changes its password on the Account page (ADR 0111) and, as people do, double
 * clicks the button. The page must send one change and say it was changed: a second call with the old
 * password is either refused as a wrong current password (a failed sign-in counted against the account)
 * or as a concurrent change, and the page would then say the change failed when it went through.
 */
test.describe('the Account page', () => {
  test.use({ storageState: { cookies: [], origins: [] } });

  test('a double click on “Change password” changes it once and says it was changed', async ({ page, baseURL }) => {
    const name = `e2e-r42-pw-${randomUUID().slice(0, 8)}`;
    const first = 'first password of this one';
    const second = 'second password of this one';
    await mutateViaConsole(baseURL ?? '', savedSessionCookie('admin'), 'operators.create', {
      name,
      displayName: name,
      role: 'viewer',
      password: first,
    });
    await page.goto('/sign-in');
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Password').fill(first);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByTestId('signed-in-name')).toHaveText(name);
    await page.goto('/account');

    const calls: string[] = [];
    // tRPC batches calls made together into one request (`/api/trpc/a,b?batch=1`): count the calls.
    page.on('request', (r) => {
      const procedures = new URL(r.url()).pathname.replace('/api/trpc/', '').split(',');
      calls.push(...procedures.filter((p) => p === 'auth.changePassword'));
    });
    await page.getByLabel('Current password').fill(first);
    await page.getByLabel('New password', { exact: true }).fill(second);
    await page.getByLabel('Repeat the new password').fill(second);
    await page.getByRole('button', { name: 'Change password' }).dblclick();
    await expect(page.getByTestId('change-password-done').or(page.getByTestId('change-password-error'))).toBeVisible();

    expect(calls, 'auth.changePassword calls sent by one double click').toHaveLength(1);
    await expect(page.getByTestId('change-password-error')).toHaveCount(0);
    await expect(page.getByTestId('change-password-done')).toContainText('Password changed.');
  });
});
