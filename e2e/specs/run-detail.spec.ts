import { randomUUID } from 'node:crypto';
import { expectNoSeriousAxeViolation, expectNoSideScroll, saveScreenshot } from '../fixtures/page-checks.ts';
import { applyRepairWithApproval, savedSessionCookie } from '../fixtures/sign-in-accounts.ts';
import { expect, startRunViaApi, startWaitingReservation, test } from '../fixtures/test.ts';

test('the timeline shows each step with its attempts, the compensation that undid it, and the timing policy', async ({
  page,
  request,
}, testInfo) => {
  const tripId = randomUUID();
  const runId = await startRunViaApi(request, { flowName: 'demo.trip', input: { tripId, failAt: 'car', failRate: 0 } });
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Compensated', { timeout: 30_000 });

  const timeline = page.getByTestId('run-timeline');
  const flight = timeline.locator('[data-testid="timeline-step"]').filter({ hasText: 'demo.book-flight' });
  await expect(flight.getByTestId('timeline-attempts')).toHaveText('attempt 1 of 2');
  await expect(flight.getByTestId('timeline-compensation')).toContainText('compensated by demo.cancel-flight');
  await expect(flight.getByTestId('timeline-compensation')).toHaveAttribute('data-status', 'Completed');
  const car = timeline.locator('[data-testid="timeline-step"]').filter({ hasText: 'demo.book-car' });
  await expect(car).toHaveAttribute('data-status', 'Errored');
  await expect(car.getByTestId('timeline-compensation')).toHaveCount(0);

  // Seed 000's four dials as this control plane applies them (the e2e stack runs the defaults).
  const timing = page.getByTestId('timing-policy');
  await expect(timing.getByTestId('dial-deadline')).toContainText('run: none');
  await expect(timing.getByTestId('dial-lock')).toContainText('off (TTL 15 min when on)');
  await expect(timing.getByTestId('dial-grace')).toContainText('off: the doctor is not enabled');
  await expect(timing.getByTestId('dial-reclaim')).toContainText('off: a Running step is never claimed again');
  await saveScreenshot(page, testInfo, 'run-timeline-compensated');
  await expectNoSeriousAxeViolation(page);
});

test('a step that keeps failing shows every attempt it took on the timeline', async ({ page, request }, testInfo) => {
  const runId = await startRunViaApi(request, {
    flowName: 'demo.order',
    input: { orderId: randomUUID(), amount: 5, failRate: 1 },
  });
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Failed', { timeout: 30_000 });
  const reserve = page
    .getByTestId('run-timeline')
    .locator('[data-testid="timeline-step"]')
    .filter({ hasText: 'demo.reserve-stock' });
  await expect(reserve.getByTestId('timeline-attempts')).toHaveText('attempt 3 of 3');
  await saveScreenshot(page, testInfo, 'run-timeline-attempts');
});

test('a signal drafted from its form (name and JSON payload) is previewed, applied, and the run goes on', async ({
  page,
  request,
}) => {
  const runId = await startWaitingReservation(request);
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Waiting');
  await page.getByTestId('signal-name').fill('confirm');
  await page.getByTestId('signal-payload').fill('{"by": "phone"}');
  await expect(page.getByTestId('signal-payload-state')).toHaveText('valid JSON');
  await page.getByTestId('draft-signal').click();
  const draft = page.getByTestId('repair-draft');
  await expect(draft.getByTestId('repair-preview')).toContainText('sends signal confirm');
  await draft.getByTestId('repair-reason').fill('customer confirmed by phone');
  await draft.getByTestId('repair-apply').click();
  await expect(draft.getByTestId('repair-applied')).toBeVisible();
  await expect(page.getByTestId('run-status')).toHaveText('Completed');
});

test('bulk repair from the runs list: a preview per run, one reason, and each run’s own outcome', async ({
  page,
  request,
  baseURL,
}, testInfo) => {
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
  await page.getByTestId('bulk-kind').selectOption('run.cancel');
  await page.getByTestId('bulk-preview').click();
  const bulk = page.getByTestId('bulk-draft');
  await expect(bulk.getByTestId('bulk-item-preview')).toHaveText(['would apply', 'would apply', 'would apply']);

  // One of them is terminated by someone else after the preview: only that one is rejected.
  const moved = runIds[1] ?? '';
  // Terminate waits for a second operator (the default approval policy); the approver approves it.
  await applyRepairWithApproval(baseURL ?? '', savedSessionCookie('operator'), savedSessionCookie('approver'), {
    kind: 'run.terminate',
    target: { runId: moved },
    expected: { runStatus: 'Waiting' },
    reason: 'someone else',
    idempotencyKey: randomUUID(),
  });
  await bulk.getByTestId('bulk-reason').fill('the event was called off');
  await bulk.getByTestId('bulk-apply').click();
  await expect(bulk.getByTestId('bulk-applied')).toHaveText('Applied to 2 of 3.');
  // Sent, the selection is cleared: the outcomes stay in the panel, the ticks do not linger.
  await expect(page.getByTestId('selection-bar')).toHaveCount(0);
  for (const id of runIds)
    await expect(bulk.locator(`[data-testid="bulk-item"][data-target-id="${id}"]`)).toHaveAttribute(
      'data-outcome',
      id === moved ? 'conflict' : 'applied',
    );
  await expect(bulk.locator(`[data-testid="bulk-item"][data-target-id="${moved}"]`)).toContainText('Terminated');
  await saveScreenshot(page, testInfo, 'runs-bulk-outcomes');
  await expectNoSeriousAxeViolation(page);
});

test.describe('at 390 px wide', () => {
  test.use({ viewport: { width: 390, height: 844 } });
  test('a run page with its repair forms does not scroll sideways', async ({ page, request }, testInfo) => {
    const runId = await startWaitingReservation(request);
    await page.goto(`/runs/${runId}`);
    await expect(page.getByTestId('run-status')).toHaveText('Waiting');
    await expect(page.getByTestId('step-form')).toBeVisible();
    await expectNoSideScroll(page);
    await saveScreenshot(page, testInfo, 'run-390px');
  });
});
