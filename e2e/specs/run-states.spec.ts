import { expect, test } from '../fixtures/test.ts';
import { childRunId, fakeRuns, parentRunId, stuckReason, stuckRunId, waitingRunId } from '../fixtures/fake-runs.ts';
import { serveFakeApi } from '../fixtures/serve-fake-api.ts';

// These pages are fed fixed API answers (typed against the control plane's router): the real stack
// cannot be made to strand a run on demand. They prove the rendering, not the engine.

test('a stuck run leads with its reason verbatim, what to do about it, and a way to its anomalies', async ({
  page,
}) => {
  await serveFakeApi(page, fakeRuns(Date.now()));
  await page.goto(`/runs/${stuckRunId}`);

  const banner = page.getByTestId('stuck-banner');
  await expect(banner.getByTestId('stuck-reason')).toHaveText(stuckReason);
  await expect(banner.getByTestId('stuck-hint')).toContainText("a listener inside the engine's transaction failed", {
    ignoreCase: true,
  });
  // When it became stuck and why, from its run.stuck event; the anomaly sits on the step it happened to.
  await expect(page.getByTestId('stuck-period')).toContainText(stuckReason);
  await expect(page.getByTestId('stuck-period')).toContainText('still stuck');
  const step4 = page.locator('[data-testid="timeline-step"][data-sequence="4"]');
  await expect(step4.getByTestId('timeline-anomaly')).toHaveAttribute('data-code', 'claim_not_committed');
  await expect(page.getByTestId('timeline-parallel')).toContainText('2 steps side by side');
  await banner.getByRole('link', { name: /1 anomaly/ }).click();
  await expect(page).toHaveURL(/#anomalies$/);
  await expect(page.getByTestId('anomaly-row')).toContainText(['claim_not_committed']);
});

test('recorded values stay hidden until asked for; parallel steps and child runs are marked', async ({ page }) => {
  await serveFakeApi(page, fakeRuns(Date.now()));
  await page.goto(`/runs/${stuckRunId}`);

  const rows = page.getByTestId('step-row');
  await expect(rows).toHaveCount(4);
  await page.getByTestId('show-values').getByRole('checkbox').check();
  await expect(rows).toHaveCount(5);
  await expect(page.locator('[data-step-kind="value"]')).toContainText('now');
  await expect(page.getByTestId('parallel-block')).toHaveText(/steps 3–4/);
  await expect(page.getByTestId('child-run-link')).toHaveAttribute('href', `/runs/${childRunId}`);
});

test('a waiting run says what it waits for and until when, its cancel request, parent and deadlines', async ({
  page,
}) => {
  await serveFakeApi(page, fakeRuns(Date.now()));
  await page.goto(`/runs/${waitingRunId}`);

  await expect(page.getByTestId('waiting-for')).toHaveText(
    /^Waiting for signal "confirm" until (\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d \(in \d+(\.\d)? s\)$/,
  );
  await expect(page.getByTestId('cancel-requested')).toContainText('customer called to cancel');
  await expect(page.getByTestId('parent-run-link')).toHaveAttribute('href', `/runs/${parentRunId}`);
  await expect(page.getByTestId('run-expires-at')).toContainText(/in (9|10) min/);
  await expect(page.getByTestId('run-timeout-at')).toBeVisible();
  await expect(page.locator('[data-step-kind="signal"]').getByTestId('step-wake-at')).toContainText('gives up');
  await expect(page.getByTestId('stuck-banner')).toHaveCount(0);
});

test('"Stuck only" asks the server for the runs with a stuck reason and shows what it answers', async ({ page }) => {
  await serveFakeApi(page, fakeRuns(Date.now()));
  await page.goto('/runs');

  await expect(page.getByTestId('run-row')).toHaveCount(6);
  await page.getByTestId('stuck-only').check();
  await expect(page).toHaveURL(/[?&]stuck=1/);
  await expect(page.getByTestId('run-row')).toHaveCount(1);
  await expect(page.getByTestId('run-row')).toContainText(stuckReason.slice(0, 40));
  await expect(page.getByTestId('list-end')).toHaveText('All 1 matching runs shown.');
});
