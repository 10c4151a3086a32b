import { randomUUID } from 'node:crypto';
import type { Browser, Page } from '@playwright/test';
import { accounts, storageStatePath } from '../fixtures/accounts.ts';
import { expectNoSeriousAxeViolation, saveScreenshot } from '../fixtures/page-checks.ts';
import { queryViaConsole, savedSessionCookie } from '../fixtures/sign-in-accounts.ts';
import { expect, test } from '../fixtures/test.ts';

/**
 * ADR 0114's addendum: the console's Operators page. An admin creates an operator, changes its role,
 * resets its password and disables it, each through the page, and each change holds where it counts:
 * the operator's own next request, its open session, its sign-in. The admin's own row offers nothing;
 * a non-admin sees neither the link nor the page; bad input shows why and changes nothing.
 */

type Listed = { name: string; displayName: string; role: string; disabled: boolean }[];
const listOperators = (baseUrl: string) =>
  queryViaConsole<Listed>(baseUrl, savedSessionCookie('admin'), 'operators.list', {});

const row = (page: Page, name: string) => page.locator(`[data-testid="operator-row"][data-name="${name}"]`);

/** A fresh signed-out browser window (its own cookies) on the shared stack. */
async function signedOutPage(browser: Browser, baseURL: string | undefined): Promise<Page> {
  const context = await browser.newContext({ baseURL, storageState: { cookies: [], origins: [] } });
  return context.newPage();
}

async function signIn(page: Page, name: string, password: string) {
  await page.goto('/sign-in');
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Creates an operator through the page's form (the admin's page is on /operators). */
async function createThroughForm(page: Page, name: string, role: string, password: string) {
  const form = page.getByTestId('new-operator');
  await form.getByLabel('Name', { exact: true }).fill(name);
  await form.getByLabel('Display name').fill(`Display ${name}`);
  await form.getByLabel('Role').selectOption(role);
  await form.getByLabel('Password', { exact: true }).fill(password);
  await form.getByLabel('Repeat the password').fill(password);
}

test.describe('an admin on the Operators page', () => {
  test.use({ storageState: storageStatePath('admin') });

  test('creates an operator, changes its role, resets its password and disables it; each holds', async ({
    page,
    browser,
    baseURL,
  }, testInfo) => {
    test.setTimeout(120_000);
    const name = `e2e-ops-${randomUUID().slice(0, 8)}`;
    const first = 'first password of the new one';
    const second = 'second password, set by an admin';
    const other = await signedOutPage(browser, baseURL);

    await test.step('the nav links the page; a double click on Create sends one request', async () => {
      await page.goto('/runs');
      await page.getByTestId('nav-operators').click();
      await expect(page.getByRole('heading', { name: 'Operators', level: 1 })).toBeVisible();
      await expect(page.getByTestId('operators-table')).toBeVisible();
      const creates: string[] = [];
      page.on('request', (r) => {
        if (r.method() === 'POST' && r.url().includes('operators.create')) creates.push(r.url());
      });
      await createThroughForm(page, name, 'viewer', first);
      await page.getByRole('button', { name: 'Create operator' }).dblclick();
      await expect(page.getByTestId('new-operator-done')).toHaveText(
        `Created ${name} as viewer; they can sign in now.`,
      );
      await expect(row(page, name).getByTestId('operator-role')).toHaveText('viewer');
      await expect(row(page, name)).toContainText(`Display ${name}`);
      expect(creates).toHaveLength(1);
      await expect(page.getByTestId('operator-form-error')).toHaveCount(0);
    });

    await test.step('the new operator signs in', async () => {
      await signIn(other, name, first);
      await expect(other.getByTestId('signed-in-name')).toHaveText(`Display ${name}`);
      await expect(other.getByTestId('signed-in-role')).toHaveText('viewer');
    });

    await test.step('a role change, by keyboard, applies to the operator’s next request', async () => {
      await row(page, name)
        .getByRole('button', { name: `Change role ${name}` })
        .focus();
      await page.keyboard.press('Enter');
      const select = page.getByLabel(`New role for ${name}`);
      await expect(select).toBeFocused();
      await select.selectOption('operator');
      await page.keyboard.press('Tab');
      await expect(page.getByRole('button', { name: 'Change role…' })).toBeFocused();
      await page.keyboard.press('Enter');
      // The confirmation takes the focus; Enter confirms.
      const confirm = page.getByRole('button', { name: `Make ${name} operator` });
      await expect(confirm).toBeFocused();
      await page.keyboard.press('Enter');
      await expect(page.getByTestId('operators-outcome')).toHaveText(
        `${name} is now operator; it applies from their next request.`,
      );
      await expect(page.getByTestId('operators-outcome')).toBeFocused();
      await expect(row(page, name).getByTestId('operator-role')).toHaveText('operator');
      // The operator's own session, unchanged, is now an operator's: the server says so, and the console shows it.
      const me = await other.request.get('/api/trpc/auth.me');
      expect(
        ((await me.json()) as { result: { data: { operator: { role: string } } } }).result.data.operator.role,
      ).toBe('operator');
      await other.goto('/demo');
      await expect(other.getByTestId('signed-in-role')).toHaveText('operator');
      await expect(other.getByRole('button', { name: 'Start demo run' })).toBeVisible();
    });

    await test.step('a password reset signs out the open session; the old password fails, the new one works', async () => {
      await other.goto('/instances');
      await expect(other.getByRole('heading', { name: 'Instances', level: 1 })).toBeVisible();
      await row(page, name)
        .getByRole('button', { name: `Reset password ${name}` })
        .click();
      const form = page.getByTestId('reset-password-form');
      await expect(form).toContainText('Every session of theirs ends at once; their API tokens stay');
      await form.getByLabel('New password', { exact: true }).fill(second);
      await form.getByLabel('Repeat the new password').fill(second);
      await saveScreenshot(page, testInfo, 'operators-reset-password');
      const resets: string[] = [];
      page.on('request', (r) => {
        if (r.method() === 'POST' && r.url().includes('operators.resetPassword')) resets.push(r.url());
      });
      // Two submits before the page re-rendered (a second Enter on a slow machine): one request.
      await form.evaluate((f: HTMLFormElement) => {
        f.requestSubmit();
        f.requestSubmit();
      });
      await expect(page.getByTestId('operators-outcome')).toHaveText(
        `Password of ${name} reset; 1 session signed out. Their API tokens stay.`,
      );
      expect(resets).toHaveLength(1);
      await other.reload().catch((err: unknown) => {
        if (!/ERR_ABORTED|Not attached to an active page/.test(String(err))) throw err;
      });
      await expect(other).toHaveURL(/\/sign-in\?next=%2Finstances&ended=1$/);
      await signIn(other, name, first);
      await expect(other.getByTestId('sign-in-error')).toHaveText('Wrong name or password.');
      await signIn(other, name, second);
      await expect(other.getByTestId('signed-in-name')).toHaveText(`Display ${name}`);
    });

    await test.step('disabling ends the session and refuses its sign-in; enabling lets it back', async () => {
      await row(page, name)
        .getByRole('button', { name: `Disable ${name}` })
        .click();
      await expect(page.getByTestId('set-disabled-form')).toContainText('Every session of theirs ends at once');
      await page
        .getByTestId('set-disabled-form')
        .getByRole('button', { name: `Disable ${name}` })
        .click();
      await expect(page.getByTestId('operators-outcome')).toHaveText(
        `${name} is disabled; their sessions ended and they cannot sign in.`,
      );
      await expect(row(page, name).getByTestId('operator-disabled')).toHaveText('disabled');
      const me = await other.request.get('/api/trpc/auth.me');
      expect(me.status()).toBe(401);
      await other.context().clearCookies();
      await signIn(other, name, second);
      await expect(other.getByTestId('sign-in-error')).toHaveText('Wrong name or password.');
      expect((await other.context().cookies()).map((c) => c.name)).not.toContain('sagaflow_session');

      await row(page, name)
        .getByRole('button', { name: `Enable ${name}` })
        .click();
      await page
        .getByTestId('set-disabled-form')
        .getByRole('button', { name: `Enable ${name}` })
        .click();
      await expect(page.getByTestId('operators-outcome')).toHaveText(`${name} is enabled; they can sign in again.`);
      await expect(row(page, name).getByTestId('operator-disabled')).toHaveText('no');
      await signIn(other, name, second);
      await expect(other.getByTestId('signed-in-name')).toHaveText(`Display ${name}`);
    });
    await other.context().close();
  });

  test('the admin’s own row says “you”, links to the Account page and offers no action', async ({ page }) => {
    await page.goto('/operators');
    const mine = row(page, accounts.admin.name);
    await expect(mine.getByTestId('operator-you')).toContainText('you');
    await expect(mine.getByRole('button')).toHaveCount(0);
    await expect(row(page, accounts.viewer.name).getByRole('button')).toHaveCount(3);
    await mine.getByRole('link', { name: 'Change your password on the Account page' }).click();
    await expect(page).toHaveURL(/\/account$/);
    await expect(page.getByRole('heading', { name: 'Change password' })).toBeVisible();
  });

  test('bad input shows the error beside the form, in the API’s words when the API refused, and changes nothing', async ({
    page,
    baseURL,
  }) => {
    const base = baseURL ?? '';
    const before = await listOperators(base);
    const name = `e2e-bad-${randomUUID().slice(0, 8)}`;
    const form = page.getByTestId('new-operator');
    const error = form.getByTestId('operator-form-error');
    const creates: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().includes('operators.')) creates.push(r.url());
    });
    await page.goto('/operators');
    await expect(page.getByTestId('operators-table')).toBeVisible();

    // Too short: the form says which field, marks it, and sends nothing.
    await createThroughForm(page, name, 'admin', 'short pw');
    await form.getByRole('button', { name: 'Create operator' }).click();
    await expect(error).toHaveText('Password: at least 12 characters.');
    await expect(form.getByLabel('Password', { exact: true })).toHaveAttribute('aria-invalid', 'true');
    // Typed differently twice.
    await form.getByLabel('Password', { exact: true }).fill('a long enough password');
    await form.getByLabel('Repeat the password').fill('a long enough passwort');
    await form.getByRole('button', { name: 'Create operator' }).click();
    await expect(error).toHaveText('Repeat the password: it differs from the password.');
    await expect(form.getByLabel('Repeat the password')).toHaveAttribute('aria-invalid', 'true');
    expect(creates).toEqual([]);

    // A taken name: the API refuses, and the form shows its words.
    await createThroughForm(page, accounts.viewer.name, 'admin', 'a long enough password');
    await form.getByRole('button', { name: 'Create operator' }).click();
    await expect(error).toHaveText(`Not created: an operator named ${accounts.viewer.name} exists`);
    expect(creates).toHaveLength(1);

    // The reset form checks its fields the same way, and sends nothing.
    await row(page, accounts.viewer.name)
      .getByRole('button', { name: `Reset password ${accounts.viewer.name}` })
      .click();
    const reset = page.getByTestId('reset-password-form');
    await reset.getByLabel('New password', { exact: true }).fill('too short');
    await reset.getByLabel('Repeat the new password').fill('too short');
    await reset.getByRole('button', { name: 'Reset password' }).click();
    await expect(reset.getByTestId('operator-form-error')).toHaveText('New password: at least 12 characters.');
    await reset.getByLabel('New password', { exact: true }).fill('a long enough password');
    await reset.getByRole('button', { name: 'Reset password' }).click();
    await expect(reset.getByTestId('operator-form-error')).toHaveText(
      'Repeat the new password: it differs from the new password.',
    );
    expect(creates).toHaveLength(1);

    // Nothing changed: the same operators, and the viewer's saved session is still open (a reset would end it).
    expect(await listOperators(base)).toEqual(before);
    const viewerMe = await queryViaConsole<{ operator: { name: string; role: string } }>(
      base,
      savedSessionCookie('viewer'),
      'auth.me',
      {},
    );
    expect(viewerMe.operator).toMatchObject({ name: accounts.viewer.name, role: 'viewer' });
  });

  test('has no serious or critical axe violation, with a form open and an error shown', async ({ page }) => {
    await page.goto('/operators');
    await expect(page.getByTestId('operators-table')).toBeVisible();
    await expectNoSeriousAxeViolation(page);
    await row(page, accounts.viewer.name)
      .getByRole('button', { name: `Change role ${accounts.viewer.name}` })
      .click();
    await expect(page.getByTestId('change-role-form')).toBeVisible();
    await page.getByTestId('new-operator').getByRole('button', { name: 'Create operator' }).click();
    await expect(page.getByTestId('new-operator').getByTestId('operator-form-error')).toHaveText(
      'Name: required (the name they sign in with).',
    );
    await expectNoSeriousAxeViolation(page);
  });
});

for (const key of ['operator', 'viewer'] as const) {
  test.describe(`a signed-in ${key}`, () => {
    test.use({ storageState: storageStatePath(key) });

    test('sees no Operators link, and the page refuses it with no list and no form', async ({ page }) => {
      await page.goto('/runs');
      await expect(page.getByTestId('signed-in-role')).toHaveText(key);
      await expect(page.getByTestId('nav-approvals')).toBeVisible();
      await expect(page.getByTestId('nav-operators')).toHaveCount(0);
      await page.goto('/operators');
      await expect(page.getByTestId('operators-refused')).toHaveText(
        `Managing operators needs the admin role; you are signed in as ${key}. Your own password is changed on the Account page.`,
      );
      await expect(page.getByRole('heading', { name: 'Operators', level: 1 })).toBeVisible();
      await expect(page.getByTestId('operators-table')).toHaveCount(0);
      await expect(page.locator('form')).toHaveCount(0);
      await expectNoSeriousAxeViolation(page);
      // The server refuses the list anyway.
      const res = await page.request.get('/api/trpc/operators.list');
      expect(res.status()).toBe(403);
    });
  });
}
