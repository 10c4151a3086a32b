import { randomUUID } from 'node:crypto';
import { expect, startRunViaApi, test } from '../fixtures/test.ts';

/**
 * Review 42: the browser's Back and Forward on a filtered runs list. The filters live in the URL (a reload
 * keeps them: lists.spec.ts). An on-call engineer narrows the list to Waiting runs, then searches one
 * business key to look at it; Back should bring the Waiting list back, as it does in any list that keeps
 * its filters in the URL.
 */
test('Back after a search returns to the list as it was filtered before the search', async ({ page, request }) => {
  const key = `r42-back-${randomUUID()}`;
  await startRunViaApi(request, { flowName: 'demo.reservation', input: { orderId: key }, businessKey: key });
  await page.goto('/');
  await page.goto('/runs');
  await page.getByTestId('status-filter').selectOption('Waiting');
  await expect(page).toHaveURL(/\/runs\?status=Waiting$/);
  await page.getByTestId('runs-search').fill(key);
  await page.getByTestId('runs-search').press('Enter');
  await expect(page).toHaveURL(new RegExp(`q=${key}`));

  await page.goBack();
  await expect(page).toHaveURL(/\/runs\?status=Waiting$/);
  await expect(page.getByTestId('status-filter')).toHaveValue('Waiting');
  await expect(page.getByTestId('runs-search')).toHaveValue('');
});

test('Back from a run opened in a filtered list returns to the list with its filters', async ({ page, request }) => {
  const key = `r42-back-${randomUUID()}`;
  const runId = await startRunViaApi(request, {
    flowName: 'demo.reservation',
    input: { orderId: key },
    businessKey: key,
  });
  await page.goto(`/runs?status=open&q=${key}`);
  await page.getByRole('link', { name: runId.slice(0, 8) }).click();
  await expect(page).toHaveURL(new RegExp(`/runs/${runId}$`));
  await expect(page.getByTestId('run-status')).toBeVisible();
  await page.goBack();
  await expect(page).toHaveURL(new RegExp(`/runs\\?status=open&q=${key}$`));
  await expect(page.getByTestId('status-filter')).toHaveValue('open');
  await expect(page.getByTestId('runs-search')).toHaveValue(key);
  await expect(page.getByRole('link', { name: runId.slice(0, 8) })).toBeVisible();
});
