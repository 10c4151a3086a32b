import { randomUUID } from 'node:crypto';
import { expect, test } from '../fixtures/test.ts';

/**
 * Review 42 (held): a run is started from the console without an idempotency key, so a second runs.start
 * call would start (and charge) a second order. A double click on Start must send one call.
 */
test('a double click on Start starts one run', async ({ page }) => {
  const calls: string[] = [];
  // tRPC batches calls made together into one request (`/api/trpc/a,b?batch=1`): count the calls.
  page.on('request', (r) => {
    const procedures = new URL(r.url()).pathname.replace('/api/trpc/', '').split(',');
    calls.push(...procedures.filter((p) => p === 'runs.start'));
  });
  await page.goto('/demo');
  await page.getByTestId('start-run-flow').selectOption('demo.order');
  const form = page.getByTestId('start-run-input');
  await form.getByTestId('start-run-input-orderId').fill(`r42-dbl-${randomUUID().slice(0, 8)}`);
  await form.getByTestId('start-run-input-amount').fill('12.5');
  await page.getByTestId('start-run-submit').dblclick();
  await expect(page.getByTestId('start-run-link')).toBeVisible();
  expect(calls, 'runs.start calls sent by one double click').toHaveLength(1);
});
