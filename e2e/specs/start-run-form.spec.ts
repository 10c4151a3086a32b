import { randomUUID } from 'node:crypto';
import { expectNoSeriousAxeViolation, saveScreenshot } from '../fixtures/page-checks.ts';
import { expect, test } from '../fixtures/test.ts';

test("the start-run form is generated from the flow's input schema and starts a run that completes", async ({
  page,
}, testInfo) => {
  await page.goto('/demo');
  await page.getByTestId('start-run-flow').selectOption('demo.order');
  const form = page.getByTestId('start-run-input');
  // One field per property of demo.order's input schema, typed as the schema says.
  await expect(form.getByTestId('start-run-input-orderId')).toHaveAttribute('type', 'text');
  await expect(form.getByTestId('start-run-input-amount')).toHaveAttribute('type', 'number');
  await expect(form.getByTestId('start-run-input-failRate')).toBeVisible();
  await expect(form.getByText('amount (required)')).toBeVisible();
  await form.getByTestId('start-run-input-orderId').fill(`form-${randomUUID().slice(0, 8)}`);
  await form.getByTestId('start-run-input-amount').fill('12.5');
  await expectNoSeriousAxeViolation(page);
  await saveScreenshot(page, testInfo, 'start-run-form');
  await page.getByTestId('start-run-submit').click();
  await page.getByTestId('start-run-link').click();

  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/);
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 30_000 });
});

test('an input the flow refuses is shown with the field the engine names, and no run is started', async ({
  page,
  request,
  baseURL,
}) => {
  const tripId = `trip-${randomUUID()}`;
  await page.goto('/demo');
  await page.getByTestId('start-run-flow').selectOption('demo.trip');
  await page.getByTestId('start-run-input-tripId').fill(tripId);
  // failAt is an enum or null: a JSON field, where a value outside the enum can be typed.
  await page.getByTestId('start-run-input-failAt').fill('"boat"');
  await page.getByTestId('start-run-business-key').fill(tripId);
  await page.getByTestId('start-run-submit').click();

  await expect(page.getByTestId('start-run-error')).toContainText('input.input.failAt');
  await expect(page.getByTestId('start-run-link')).toHaveCount(0);
  const runs = await request.get(
    `${baseURL}/api/trpc/runs.page?input=${encodeURIComponent(JSON.stringify({ search: tripId }))}`,
  );
  expect(runs.status(), await runs.text()).toBe(200);
  expect(((await runs.json()) as { result: { data: { items: unknown[] } } }).result.data.items).toEqual([]);
});
