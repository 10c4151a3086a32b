import { randomUUID } from 'node:crypto';
import { expectNoSeriousAxeViolation, expectNoSideScroll, saveScreenshot } from '../fixtures/page-checks.ts';
import { expect, startRunViaApi, test } from '../fixtures/test.ts';

test('definitions: the flows and processes this control plane runs, with their open runs, linked to the lists', async ({
  page,
  request,
}, testInfo) => {
  // A reservation waits for its confirm signal: an open run of demo.reservation v1.
  await startRunViaApi(request, { flowName: 'demo.reservation', input: { orderId: randomUUID() } });
  await page.goto('/definitions');
  await expect(page.getByRole('heading', { level: 1, name: 'Definitions' })).toBeVisible();
  const reservation = page.locator('[data-testid="flow-row"][data-flow="demo.reservation"]');
  await expect(reservation).toContainText('running here');
  await expect(reservation.getByTestId('flow-open-count')).toContainText(/Waiting \d+/);
  await expect(page.locator('[data-testid="flow-row"][data-flow="demo.order"]')).toBeVisible();
  const fulfilment = page.locator('[data-testid="process-row"][data-process="demo.fulfilment"]');
  await expect(fulfilment).toContainText('starts in AwaitingPayment');
  await expect(fulfilment).toContainText('operator commands: RetryRefund');
  await saveScreenshot(page, testInfo, 'definitions');
  await expectNoSeriousAxeViolation(page);

  await reservation.getByRole('link', { name: 'open runs →' }).click();
  await expect(page).toHaveURL(/\/runs\?status=open&flow=demo\.reservation$/);
  await expect(page.getByTestId('run-row').first()).toBeVisible();
});

test.describe('at 390 px wide', () => {
  test.use({ viewport: { width: 390, height: 844 } });
  test('definitions do not scroll sideways', async ({ page }) => {
    await page.goto('/definitions');
    await expect(page.getByTestId('flows-table')).toBeVisible();
    await expectNoSideScroll(page);
  });
});
