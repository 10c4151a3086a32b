import { randomUUID } from 'node:crypto';
import { expect, startWaitingReservation, test } from '../fixtures/test.ts';

test('a selected run that finishes and leaves the filtered list is still accounted for: the bulk says what became of every ticked run', async ({
  page,
  request,
  baseURL,
}) => {
  const runIds = [
    await startWaitingReservation(request),
    await startWaitingReservation(request),
    await startWaitingReservation(request),
  ];
  await page.goto('/runs?status=Waiting');
  for (const id of runIds) {
    const row = page.locator(`[data-testid="run-row"][data-run-id="${id}"]`);
    await expect(row).toContainText('Waiting');
    await row.getByTestId('run-select').check();
  }
  await expect(page.getByTestId('selection-bar')).toContainText('3 runs selected');

  // The engine finishes one of them (its guest confirms) while the operator is choosing what to do.
  const finished = runIds[2] ?? '';
  const signalled = await request.post(`${baseURL}/api/trpc/repairs.applyOne`, {
    data: {
      kind: 'run.signal',
      target: { runId: finished },
      expected: { runStatus: 'Waiting' },
      reason: 'review 33: the guest confirmed',
      idempotencyKey: randomUUID(),
      signal: { name: 'confirm' },
    },
  });
  expect(signalled.status(), await signalled.text()).toBe(200);
  // The list refreshes on its own: the finished run leaves the Waiting view.
  await expect(page.locator(`[data-testid="run-row"][data-run-id="${finished}"]`)).toHaveCount(0);

  const bar = page.getByTestId('selection-bar');
  const barSays = Number(/(\d+) runs? selected/.exec((await bar.textContent()) ?? '')?.[1]);
  await page.getByTestId('bulk-kind').selectOption('run.cancel');
  await page.getByTestId('bulk-preview').click();
  const bulk = page.getByTestId('bulk-draft');
  await expect(bulk.getByTestId('bulk-item')).toHaveCount(2);
  // The bar's count and the draft must agree: either the bar no longer counts the run that left, or
  // the draft says it was left out (finished). A run that silently vanishes between the two is not.
  if (barSays === 3) await expect(bulk).toContainText(/1 run left out/);
  else expect(barSays).toBe(2);
});

test('the list’s refreshes keep a half-typed search, the ticks and the scroll position', async ({ page, request }) => {
  const runIds = [await startWaitingReservation(request), await startWaitingReservation(request)];
  await page.setViewportSize({ width: 1280, height: 500 });
  await page.goto('/runs?status=Waiting');
  for (const id of runIds)
    await page.locator(`[data-testid="run-row"][data-run-id="${id}"]`).getByTestId('run-select').check();
  await page.getByTestId('runs-search').fill('half typed key');
  await page.evaluate(() => window.scrollTo(0, 200));
  const scrolled = await page.evaluate(() => window.scrollY);
  expect(scrolled).toBeGreaterThan(0);
  const updated = page.getByTestId('last-updated');
  for (let i = 0; i < 2; i++) {
    const before = await updated.textContent();
    await expect(updated).not.toHaveText(before ?? '');
  }
  await expect(page.getByTestId('runs-search')).toHaveValue('half typed key');
  await expect(page.getByTestId('runs-search')).toBeFocused();
  await expect(page.getByTestId('selection-bar')).toContainText('2 runs selected');
  expect(await page.evaluate(() => window.scrollY)).toBe(scrolled);
});
