import { randomUUID } from 'node:crypto';
import { storageStatePath } from '../fixtures/accounts.ts';
import { mutateViaConsole, savedSessionCookie } from '../fixtures/sign-in-accounts.ts';
import { expect, test } from '../fixtures/test.ts';

/**
 * Review 44. The Operators page (ADR 0114's addendum) opens each row's action in a panel from a button
 * and, when the action is done, moves the focus to the answer, "not back to the page's top"
 * (operators-page.tsx). Cancelling the panel by keyboard removes the focused Cancel button with the
 * panel: the focus must land back on the row's button that opened it, not on the document's body (a
 * keyboard user would start again from the top of the page).
 */
test.describe('an admin cancels an operator action by keyboard', () => {
  test.use({ storageState: storageStatePath('admin') });

  for (const action of ['Disable', 'Reset password', 'Change role'] as const) {
    test(`DEFECT: after Cancel in “${action}”, the focus is back on the row’s ${action} button`, async ({
      page,
      baseURL,
    }) => {
      const name = `e2e-r44-${randomUUID().slice(0, 8)}`;
      await mutateViaConsole(baseURL!, savedSessionCookie('admin'), 'operators.create', {
        name,
        displayName: `R44 ${name}`,
        role: 'viewer',
        password: 'a password for review 44',
      });
      await page.goto('/operators');
      const row = page.locator(`[data-testid="operator-row"][data-name="${name}"]`);
      const opener = row.getByRole('button', { name: `${action} ${name}` });
      await opener.focus();
      await page.keyboard.press('Enter');
      const panel = page.getByTestId('operator-action');
      await expect(panel).toBeVisible();
      const cancel = panel.getByRole('button', { name: 'Cancel' });
      // Tab through the panel until Cancel has the focus, then press it.
      for (let i = 0; i < 10 && !(await cancel.evaluate((el) => el === document.activeElement)); i++)
        await page.keyboard.press('Tab');
      await expect(cancel).toBeFocused();
      await page.keyboard.press('Enter');
      await expect(panel).toHaveCount(0);
      const focused = await page.evaluate(() => {
        const el = document.activeElement;
        return el === null || el === document.body ? 'body' : (el.getAttribute('aria-label') ?? el.textContent);
      });
      expect(focused).toBe(`${action} ${name}`);
    });
  }
});
