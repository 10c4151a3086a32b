import { saveScreenshot } from '../fixtures/page-checks.ts';
import { expect, test } from '../fixtures/test.ts';

// On the shared stack (no anomaly there matches this filter). The anomalies a real frozen worker makes are
// in anomalies.spec.ts, on a stack of its own.

test('the anomaly log on a real stack: a filter that matches nothing says so, kept in the URL', async ({
  page,
}, testInfo) => {
  await page.goto('/anomalies');
  await expect(page.getByRole('heading', { level: 1, name: 'Anomaly log' })).toBeVisible();
  await expect(page.getByTestId('last-updated')).toContainText('updated');
  await page.getByTestId('filter-code').selectOption('replan_failed');
  await page.getByTestId('filter-since').selectOption('1h');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page).toHaveURL(/\/anomalies\?code=replan_failed&since=1h$/);
  await expect(page.getByTestId('anomalies-empty')).toContainText('No anomaly matches this filter');
  await saveScreenshot(page, testInfo, 'anomalies-empty');
  await page.getByRole('link', { name: 'Show every anomaly' }).click();
  await expect(page).toHaveURL(/\/anomalies$/);
});
