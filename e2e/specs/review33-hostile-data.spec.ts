import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { Page } from '@playwright/test';
import { expectNoSideScroll, saveScreenshot } from '../fixtures/page-checks.ts';
import { expect, startRunViaApi, test } from '../fixtures/test.ts';

/** Markup that would run if any of it reached the page as HTML. */
const markup = `<img src=x onerror="window.__r33=1"><script>window.__r33=2</script>`;
/** Right-to-left text, zero-width joiners and spaces, emoji, and one unbroken word, 200 characters in all. */
const hostileKey = () => `${markup}\u202Eשלום\u200B\u200D👩‍👩‍👧${randomUUID()}${'K'.repeat(150)}`.slice(0, 200);

/** Nothing the data carried ran: no flag set, no dialog opened. */
async function expectNothingRan(page: Page, dialogs: string[]) {
  expect(await page.evaluate(() => (window as unknown as { __r33?: number }).__r33)).toBeUndefined();
  expect(dialogs).toEqual([]);
}

test.describe('hostile data on the run page and the runs list', () => {
  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 390, height: 844 },
  ]) {
    test(`at ${viewport.width} px: markup, RTL, zero-width and a 200-character key are shown as text, nothing runs, no sideways scroll`, async ({
      page,
      request,
    }, testInfo) => {
      await page.setViewportSize(viewport);
      const dialogs: string[] = [];
      page.on('dialog', (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      const orderId = `${markup}${'O'.repeat(3000)}`;
      const businessKey = hostileKey();
      const runId = await startRunViaApi(request, {
        flowName: 'demo.reservation',
        input: { orderId },
        businessKey,
        tags: ['e2e', `<b>${'T'.repeat(60)}</b>`],
      });
      await page.goto(`/runs/${runId}`);
      await expect(page.getByTestId('run-status')).toHaveText('Waiting');
      await expect(page.locator('main')).toContainText(businessKey);
      await expectNothingRan(page, dialogs);
      await expectNoSideScroll(page);
      await saveScreenshot(page, testInfo, `hostile-run-${viewport.width}`);

      await page.goto(`/runs?q=${runId}`);
      const row = page.locator(`[data-testid="run-row"][data-run-id="${runId}"]`);
      await expect(row).toBeVisible();
      await expectNothingRan(page, dialogs);
      await expectNoSideScroll(page);
      await saveScreenshot(page, testInfo, `hostile-list-${viewport.width}`);
    });
  }
});

test('a run with a near-1 MB input: the page stays usable and “Download value.json” saves the whole input', async ({
  page,
  request,
}, testInfo) => {
  // 390,000 two-byte characters: about 780 KB of UTF-8, under the 1 MiB input limit.
  const orderId = `${randomUUID()}-${'ü'.repeat(390_000)}`;
  const runId = await startRunViaApi(request, { flowName: 'demo.reservation', input: { orderId } });
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Waiting');
  const input = page.getByTestId('json-block').first();
  await expect(input).toHaveAttribute('data-cut', 'yes');
  await expectNoSideScroll(page);
  await saveScreenshot(page, testInfo, 'run-1mb-input');

  const downloading = page.waitForEvent('download', { timeout: 15_000 });
  await page.getByRole('link', { name: 'Download value.json' }).first().click();
  const download = await downloading;
  const saved = JSON.parse(readFileSync(await download.path(), 'utf8')) as { orderId: string };
  expect(saved.orderId).toBe(orderId);
});
