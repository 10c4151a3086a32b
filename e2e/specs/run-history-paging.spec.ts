import { randomUUID } from 'node:crypto';
import type { APIRequestContext, Locator, Page } from '@playwright/test';
import { expectNoSeriousAxeViolation, saveScreenshot } from '../fixtures/page-checks.ts';
import { expect, startRunViaApi, test } from '../fixtures/test.ts';

/** A pick list of `lines` steps (demo.pick-list: one step per line), started as the browser would. */
const startPickList = (request: APIRequestContext, lines: number, pauseMs = 0) =>
  startRunViaApi(request, { flowName: 'demo.pick-list', input: { orderId: randomUUID(), lines, pauseMs } });

/** Waits through the console's API until the run is Completed (the page is opened afterwards). */
async function waitCompleted(request: APIRequestContext, runId: string): Promise<void> {
  await expect
    .poll(
      async () => {
        const res = await request.get(
          `${process.env.BASE_URL}/api/trpc/runs.get?input=${encodeURIComponent(JSON.stringify({ id: runId }))}`,
        );
        return ((await res.json()) as { result?: { data?: { run: { status: string } } } }).result?.data?.run.status;
      },
      { timeout: 120_000, intervals: [500] },
    )
    .toBe('Completed');
}

/** The step sequences the steps table shows, in its order. */
const shownSequences = async (page: Page) =>
  (await page.getByTestId('steps-table').locator('[data-testid="step-row"] td:first-child').allTextContents()).map(
    Number,
  );

/** Clicks "Load older <part>" until it is gone, each time waiting for the page's rows to grow. */
async function loadAllOlder(page: Page, part: 'steps' | 'events', rows: Locator): Promise<void> {
  for (let clicks = 0; (await page.getByTestId(`load-older-${part}`).count()) > 0; clicks++) {
    expect(clicks, `Load older ${part} never ends`).toBeLessThan(10);
    const before = await rows.count();
    await page.getByTestId(`load-older-${part}`).click();
    await expect(rows).not.toHaveCount(before);
  }
}

test.describe.configure({ timeout: 180_000 });

test('a run with 130 steps opens on its newest 50 and “Load older steps” reaches the first, each step once', async ({
  page,
  request,
}, testInfo) => {
  const runId = await startPickList(request, 130);
  await waitCompleted(request, runId);
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Completed');
  await expect(page.getByTestId('older-steps')).toContainText('Showing the newest 50 steps');
  expect(await shownSequences(page)).toEqual(Array.from({ length: 50 }, (_, i) => 81 + i));
  await saveScreenshot(page, testInfo, 'run-history-newest-page');
  // The page's accessibility is checked here, with both "Load older" buttons on it: once all 130 steps and
  // their events are shown the same rows repeat, and axe took 14–20 s over them (ADR 0084).
  await expectNoSeriousAxeViolation(page);

  await loadAllOlder(page, 'steps', page.getByTestId('step-row'));
  await expect(page.getByTestId('all-steps')).toHaveText('All 130 steps shown.');
  expect(await shownSequences(page)).toEqual(Array.from({ length: 130 }, (_, i) => 1 + i));
  await expect(page.getByTestId('steps-table').getByText('demo.pick-line').first()).toBeVisible();

  // Events the same way: 130 steps record more events than the first page (100) holds.
  await expect(page.getByTestId('older-events')).toContainText('Showing the newest 100 events');
  await loadAllOlder(page, 'events', page.getByTestId('events-timeline').locator('li'));
  await expect(page.getByTestId('all-events')).toBeVisible();
  await saveScreenshot(page, testInfo, 'run-history-all-steps');
  // What the whole history adds to the page: the two "all shown" notes.
  await expectNoSeriousAxeViolation(page, ['[data-testid="all-steps"]', '[data-testid="all-events"]']);
});

test('a page opened while the run records keeps every new step once by polling only what is newer', async ({
  page,
  request,
}) => {
  // 120 lines of 100 ms each: the page opens on a run that is still picking.
  const runId = await startPickList(request, 120, 100);
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Running');
  await expect(page.getByTestId('run-status')).toHaveText('Completed', { timeout: 150_000 });
  const shown = await shownSequences(page);
  // The head held at most 50 steps and nothing older was asked for: every step past them came by
  // polling, in order, once, up to the last.
  expect(shown.length).toBeGreaterThan(50);
  expect(shown.at(-1)).toBe(120);
  expect(shown).toEqual(Array.from({ length: shown.length }, (_, i) => shown[0]! + i));
});
