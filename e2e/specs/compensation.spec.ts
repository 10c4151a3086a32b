import { randomUUID } from 'node:crypto';
import { expect, startRunViaApi, test } from '../fixtures/test.ts';

test('a trip whose car booking fails for good ends Compensated, cancelling the hotel and then the flight', async ({
  page,
  request,
}) => {
  const tripId = randomUUID();
  const runId = await startRunViaApi(request, {
    flowName: 'demo.trip',
    input: { tripId, failAt: 'car' },
    businessKey: tripId,
  });
  await page.goto(`/runs/${runId}`);

  await expect(page.getByTestId('run-status')).toHaveText('Compensated', { timeout: 30_000 });
  await expect(page.getByText('Finished · not refreshing')).toBeVisible();

  const car = page.locator('[data-testid="step-row"][data-step-name="demo.book-car"]');
  await expect(car.getByTestId('step-status')).toHaveText('Errored');

  // Undone newest first: the hotel (booked second) before the flight (booked first); the car never was.
  const compensations = page.getByTestId('compensations').getByTestId('compensation-row');
  await expect(compensations).toHaveCount(2);
  await expect(compensations.nth(0)).toHaveAttribute('data-compensation-name', 'demo.cancel-hotel');
  await expect(compensations.nth(1)).toHaveAttribute('data-compensation-name', 'demo.cancel-flight');
  await expect(compensations.getByTestId('compensation-status')).toHaveText(['Completed', 'Completed']);
});
