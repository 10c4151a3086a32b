import { randomUUID } from 'node:crypto';
import { expect, startDemoRunViaApi, test } from '../fixtures/test.ts';

const demoSteps = ['demo.charge-card', 'demo.reserve-stock', 'demo.ship-order'];

test('a demo run started from the demo page reaches Completed, with its three steps Completed in order', async ({
  page,
}) => {
  await page.goto('/runs');
  // The on-call list has no start button; the demo has its own page in the navigation.
  await expect(page.getByRole('button', { name: 'Start demo run' })).toHaveCount(0);
  await page.getByRole('link', { name: 'Demo', exact: true }).click();
  await page.getByRole('button', { name: 'Start demo run' }).click();
  await page.getByTestId('started-run-link').click();

  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/);
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 30_000 });
  await expect(page.getByTestId('step-row')).toHaveText(demoSteps.map((name) => new RegExp(`${name}.*Completed`)));
  await expect(page.getByTestId('events-timeline')).toContainText('run.completed');
  await expect(page.getByText('Finished · not refreshing')).toBeVisible();
});

test('the run page for an unknown run id says the run was not found and links back to the list', async ({ page }) => {
  const id = randomUUID();
  await page.goto(`/runs/${id}`);

  const notFound = page.getByTestId('run-not-found');
  await expect(notFound).toContainText('Run not found');
  await expect(notFound).toContainText(id);
  await notFound.getByRole('link', { name: /Back to all runs/ }).click();
  await expect(page).toHaveURL(/\/runs$/);
  await expect(page.getByRole('heading', { name: 'Runs' })).toBeVisible();
});

test('the runs list shows a run started through the API, and its row opens the run', async ({ page, request }) => {
  const orderId = randomUUID();
  const runId = await startDemoRunViaApi(request, orderId);
  await page.goto('/runs');

  const row = page.locator(`[data-testid="run-row"][data-run-id="${runId}"]`);
  await expect(row).toContainText('demo.order');
  await expect(row).toContainText(orderId);
  // The list refreshes itself every 2 s: the row moves to Completed without a reload.
  await expect(row).toContainText('Completed', { timeout: 30_000 });
  await row.getByRole('link', { name: runId.slice(0, 8) }).click();
  await expect(page).toHaveURL(new RegExp(`/runs/${runId}$`));
  await expect(page.getByTestId('run-status')).toHaveText('Completed');
});
