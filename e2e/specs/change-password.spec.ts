import { randomUUID } from 'node:crypto';
import { mutateViaConsole, savedSessionCookie } from '../fixtures/sign-in-accounts.ts';
import { expect, test } from '../fixtures/test.ts';

/**
 * ADR 0111: the signed-in operator changes its own password from the console's Account page (linked
 * beside its name): a wrong current password says so and changes nothing; the right one changes it,
 * this session stays, and the new password is the one that signs in.
 */
test.describe('changing one’s own password', () => {
  test.use({ storageState: { cookies: [], origins: [] } });

  test('from the Account page, with the current password; the new one signs in', async ({ page, baseURL }) => {
    const name = `e2e-pw-${randomUUID().slice(0, 8)}`;
    const first = 'first password of this one';
    const second = 'second password of this one';
    await mutateViaConsole(baseURL ?? '', savedSessionCookie('admin'), 'operators.create', {
      name,
      displayName: name,
      role: 'viewer',
      password: first,
    });
    const signIn = async (password: string) => {
      await page.goto('/sign-in');
      await page.getByLabel('Name').fill(name);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
    };
    await signIn(first);
    await page.getByTestId('account-link').click();
    await expect(page.getByRole('heading', { name: 'Change password' })).toBeVisible();

    await page.getByLabel('Current password').fill('not the password');
    await page.getByLabel('New password', { exact: true }).fill(second);
    await page.getByLabel('Repeat the new password').fill(second);
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect(page.getByTestId('change-password-error')).toHaveText(
      'The current password is wrong; nothing changed.',
    );

    await page.getByLabel('Current password').fill(first);
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect(page.getByTestId('change-password-done')).toContainText('Password changed.');
    // This session stays signed in.
    await page.goto('/runs');
    await expect(page.getByTestId('signed-in-name')).toHaveText(name);

    await page.context().clearCookies();
    await signIn(first);
    await expect(page.getByTestId('sign-in-error')).toHaveText('Wrong name or password.');
    await signIn(second);
    await expect(page.getByTestId('signed-in-name')).toHaveText(name);
  });
});
