import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { accounts, storageStatePath } from '../fixtures/accounts.ts';
import { saveScreenshot } from '../fixtures/page-checks.ts';
import { mutateViaConsole } from '../fixtures/sign-in-accounts.ts';
import { expect, test } from '../fixtures/test.ts';
import type { Page } from '@playwright/test';

const signedOut = { cookies: [], origins: [] };

/** The admin's session cookie value, saved by the global setup. */
const adminCookie = () =>
  (JSON.parse(readFileSync(storageStatePath('admin'), 'utf8')) as { cookies: { value: string }[] }).cookies[0]?.value ??
  '';

async function signInThroughForm(page: Page, name: string, password: string) {
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** A raw request to the console with a Host and Origin of our choosing (fetch will not send a foreign Host). */
function rawConsoleRequest(baseUrl: string, path: string, headers: Record<string, string>, body?: string) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpRequest(new URL(path, baseUrl), { method: body ? 'POST' : 'GET', headers }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test.describe('signed out', () => {
  test.use({ storageState: signedOut });

  test('a page asked for without a session bounces to sign-in, and signing in lands back on it', async ({ page }) => {
    await page.goto('/runs?status=Failed');
    await expect(page).toHaveURL(/\/sign-in\?next=%2Fruns%3Fstatus%3DFailed$/);
    await expect(page.getByRole('heading', { name: 'Sign in to Sagaflow' })).toBeVisible();
    await signInThroughForm(page, accounts.operator.name, accounts.operator.password);
    await expect(page).toHaveURL(/\/runs\?status=Failed$/);
    await expect(page.getByTestId('signed-in-name')).toHaveText(accounts.operator.name);
    await expect(page.getByTestId('signed-in-role')).toHaveText('operator');
  });

  test('a wrong password says so, stays on sign-in and sets no session', async ({ page, context }, testInfo) => {
    await page.goto('/sign-in');
    await signInThroughForm(page, accounts.viewer.name, 'not the password');
    await expect(page.getByTestId('sign-in-error')).toHaveText('Wrong name or password.');
    await saveScreenshot(page, testInfo, 'sign-in-wrong-password');
    await expect(page).toHaveURL(/\/sign-in$/);
    expect((await context.cookies()).map((c) => c.name)).not.toContain('sagaflow_session');
    await page.goto('/instances');
    await expect(page).toHaveURL(/\/sign-in\?next=%2Finstances$/);
  });

  test('signing out ends the session on the server: the old cookie opens nothing and pages bounce again', async ({
    page,
    context,
    baseURL,
  }) => {
    await page.goto('/sign-in');
    await signInThroughForm(page, accounts.signOut.name, accounts.signOut.password);
    await expect(page).toHaveURL(/\/runs$/);
    const cookie = (await context.cookies()).find((c) => c.name === 'sagaflow_session');
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Strict');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect(page).toHaveURL(/\/sign-in\?signedOut=1$/);
    await expect(page.getByTestId('sign-in-notice')).toHaveText('You are signed out.');
    const old = await rawConsoleRequest(baseURL ?? '', '/api/trpc/auth.me', {
      cookie: `sagaflow_session=${cookie?.value ?? ''}`,
    });
    expect(old.status).toBe(401);
    await page.goto('/runs');
    await expect(page).toHaveURL(/\/sign-in/);
  });

  test('a session that ends while its page is open bounces to sign-in, and signing in again returns to the page', async ({
    page,
    baseURL,
  }) => {
    const base = baseURL ?? '';
    await page.goto('/sign-in?next=%2Finstances');
    await signInThroughForm(page, accounts.expiring.name, accounts.expiring.password);
    await expect(page).toHaveURL(/\/instances$/);
    // An admin disables the account: its session row is deleted while the browser still holds the cookie.
    await mutateViaConsole(base, adminCookie(), 'operators.setDisabled', {
      name: accounts.expiring.name,
      disabled: true,
    });
    // The page's own refresh may meet the ended session first and bounce while the reload is under
    // way: the reload is then aborted, or (in the headless shell) finds its page replaced by the bounce.
    // Either way the browser must land on sign-in.
    await page.reload().catch((err: unknown) => {
      if (!/ERR_ABORTED|Not attached to an active page/.test(String(err))) throw err;
    });
    await expect(page).toHaveURL(/\/sign-in\?next=%2Finstances&ended=1$/);
    await expect(page.getByTestId('sign-in-notice')).toContainText('Your session has ended');
    await mutateViaConsole(base, adminCookie(), 'operators.setDisabled', {
      name: accounts.expiring.name,
      disabled: false,
    });
    await signInThroughForm(page, accounts.expiring.name, accounts.expiring.password);
    await expect(page).toHaveURL(/\/instances$/);
    await expect(page.getByRole('heading', { name: 'Instances', level: 1 })).toBeVisible();
  });
});

test.describe('a viewer', () => {
  test.use({ storageState: storageStatePath('viewer') });

  test('sees the runs but no control to start one, and the server refuses it anyway', async ({ page, request }) => {
    await page.goto('/demo');
    await expect(page.getByTestId('signed-in-role')).toHaveText('viewer');
    await expect(page.getByRole('heading', { name: 'Demo', level: 1 })).toBeVisible();
    await expect(page.getByText('Starting a run needs the operator role')).toBeVisible();
    await expect(page.getByRole('button', { name: 'Start demo run' })).toHaveCount(0);
    const res = await request.post('/api/trpc/runs.start', {
      data: { flowName: 'demo.order', input: { orderId: 'viewer', amount: 1 } },
    });
    expect(res.status()).toBe(403);
    expect(await res.text()).toContain('needs the operator role');
  });
});

test('an operator sees the start control the viewer does not', async ({ page }) => {
  await page.goto('/demo');
  await expect(page.getByTestId('signed-in-role')).toHaveText('operator');
  await expect(page.getByRole('button', { name: 'Start demo run' })).toBeVisible();
});

test('the console refuses Host: attacker.example and a foreign Origin; nothing is started', async ({
  baseURL,
  request,
}) => {
  const base = baseURL ?? '';
  const operatorCookie = (
    JSON.parse(readFileSync(storageStatePath('operator'), 'utf8')) as { cookies: { value: string }[] }
  ).cookies[0]?.value;
  const count = async () => {
    const res = await request.get(`/api/trpc/runs.list?input=${encodeURIComponent(JSON.stringify({ limit: 500 }))}`);
    return ((await res.json()) as { result: { data: unknown[] } }).result.data.length;
  };
  const before = await count();
  const body = JSON.stringify({ flowName: 'demo.order', input: { orderId: 'attack', amount: 1 } });
  const headers = { 'content-type': 'application/json', cookie: `sagaflow_session=${operatorCookie ?? ''}` };
  const rebound = await rawConsoleRequest(base, '/api/trpc/runs.start', { ...headers, host: 'attacker.example' }, body);
  expect(rebound.status).toBe(403);
  expect(rebound.text).toContain('CONSOLE_ALLOWED_HOSTS');
  const page = await rawConsoleRequest(base, '/runs', { ...headers, host: 'attacker.example:3000' });
  expect(page.status).toBe(403);
  const foreign = await rawConsoleRequest(
    base,
    '/api/trpc/runs.start',
    { ...headers, origin: 'http://attacker.example' },
    body,
  );
  expect(foreign.status).toBe(403);
  expect(await count()).toBe(before);
});
