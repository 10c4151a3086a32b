import { accounts } from '../fixtures/accounts.ts';
import { expect, test } from '../fixtures/test.ts';
import type { Page } from '@playwright/test';

/**
 * Review 37. The sign-in page promises (apps/web/auth/request-guards.ts, safeNextPath) that `next`
 * leads to "a path on this console only", so a link to the real sign-in page cannot send whoever
 * signs in somewhere else (an open redirect: phishing that starts on the real console's address).
 * A dot segment (`/.//evil.example`) passes its checks, and the URL parser then folds it into the
 * protocol-relative `//evil.example`, which `window.location.assign` follows off the console.
 */
test.describe('review 37: where sign-in goes afterwards', () => {
  test.use({ storageState: { cookies: [], origins: [] } });

  async function signInWithNext(page: Page, next: string) {
    // Nothing leaves the machine: any request to the foreign site is answered here.
    await page.route('http://evil.example/**', (route) =>
      route.fulfill({ status: 200, contentType: 'text/html', body: '<h1>not the console</h1>' }),
    );
    await page.goto(`/sign-in?next=${encodeURIComponent(next)}`);
    await page.getByLabel('Name').fill(accounts.viewer.name);
    await page.getByLabel('Password').fill(accounts.viewer.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => u.pathname !== '/sign-in');
    return new URL(page.url());
  }

  for (const next of ['/.//evil.example/phish', '/a/..//evil.example/phish']) {
    test(`next=${next} stays on the console`, async ({ page, baseURL }) => {
      const landed = await signInWithNext(page, next);
      expect(landed.origin).toBe(new URL(baseURL ?? '').origin);
    });
  }

  test('held: next=//evil.example and next=https://evil.example stay on the console', async ({ page, baseURL }) => {
    const landed = await signInWithNext(page, '//evil.example/phish');
    expect(landed.origin).toBe(new URL(baseURL ?? '').origin);
    await page.context().clearCookies();
    const again = await signInWithNext(page, 'https://evil.example/phish');
    expect(again.origin).toBe(new URL(baseURL ?? '').origin);
  });
});
