import { randomUUID } from 'node:crypto';
import { storageStatePath } from '../fixtures/accounts.ts';
import { mutateViaConsole, savedSessionCookie } from '../fixtures/sign-in-accounts.ts';
import { expect, startWaitingReservation, test } from '../fixtures/test.ts';

/** Signs `name` in through the console's API (another browser, another session); returns its cookie. */
async function signInElsewhere(baseUrl: string, name: string, password: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/trpc/auth.signIn`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: baseUrl },
    body: JSON.stringify({ name, password }),
  });
  const cookie = /sagaflow_session=([^;]+)/.exec(res.headers.getSetCookie().join(';'))?.[1];
  if (res.status !== 200 || !cookie) throw new Error(`sign-in as ${name}: ${res.status}`);
  return cookie;
}

/**
 * Review 42: an operator has a cancel drafted on a run's page, its reason typed, when its session ends
 * (its password is changed from another session, which ends every other one: ADR 0111). The page's next
 * poll is refused and the console replaces the page with sign-in. The operator must learn that the draft
 * was not applied, and the draft must not vanish without a word: either the sign-in page says the open
 * draft was not applied, or the run's page shows it again after signing back in.
 */
test.describe('a session that ends with a repair draft open', () => {
  test.use({ storageState: { cookies: [], origins: [] } });

  test('the operator is told the open draft was not applied, or gets it back after signing in again', async ({
    page,
    baseURL,
    playwright,
  }) => {
    const base = baseURL ?? '';
    const name = `e2e-r42-${randomUUID().slice(0, 8)}`;
    const first = 'first password of this one';
    const second = 'second password of this one';
    await mutateViaConsole(base, savedSessionCookie('admin'), 'operators.create', {
      name,
      displayName: name,
      role: 'operator',
      password: first,
    });
    const operator = await playwright.request.newContext({ storageState: storageStatePath('operator') });
    const runId = await startWaitingReservation(operator);
    await operator.dispose();

    await page.goto('/sign-in');
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Password').fill(first);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByTestId('signed-in-name')).toHaveText(name);
    await page.goto(`/runs/${runId}`);
    await expect(page.getByTestId('run-status')).toHaveText('Waiting');
    await page.getByTestId('repair-run.cancel').click();
    const draft = page.getByTestId('repair-draft');
    await expect(draft.getByTestId('repair-preview')).toBeVisible();
    const reason = 'customer called at 03:10 to cancel, ticket 4411';
    await draft.getByTestId('repair-reason').fill(reason);

    // The same operator changes its password from another session: this page's session ends.
    const elsewhere = await signInElsewhere(base, name, first);
    await mutateViaConsole(base, elsewhere, 'auth.changePassword', { currentPassword: first, newPassword: second });
    await page.waitForURL(/\/sign-in\?/, { timeout: 30_000 });
    await expect(page.getByText('Your session has ended')).toBeVisible();
    const signInText = await page.locator('main').innerText();

    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Password').fill(second);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(new RegExp(`/runs/${runId}$`));
    // Nothing was applied behind the operator's back.
    await expect(page.getByTestId('run-status')).toHaveText('Waiting');

    // The page's repairs have rendered (the role is known), so a restored draft would be there now.
    await expect(page.getByTestId('run-repairs')).toBeVisible();
    const toldOnSignIn = /draft|not applied/i.test(signInText);
    const draftBack = (await draft.count()) > 0 && (await draft.getByTestId('repair-reason').inputValue()) === reason;
    expect(
      toldOnSignIn || draftBack,
      `the drafted cancel and its typed reason vanished without a word; sign-in said: ${JSON.stringify(signInText)}; drafts on the run page: ${await draft.count()}`,
    ).toBe(true);
  });
});
