import type { Page } from '@playwright/test';
import { expect, startWaitingReservation, test } from '../fixtures/test.ts';

/**
 * Review 42: a keyboard-only operator at 3 a.m. drafts a repair from a run's page. The draft panel opens
 * below the run's signal and step forms; when it closes or is applied the control that had focus goes
 * away. Where focus lands decides whether the next Tab continues in the draft or starts from the top bar.
 */

/** What has keyboard focus now: its test id, or its tag name when it has none. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement;
    return el?.getAttribute('data-testid') ?? el?.tagName ?? 'nothing';
  });

test('opening a repair draft from the keyboard moves focus into the draft', async ({ page, request }) => {
  const runId = await startWaitingReservation(request);
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Waiting');
  await page.getByTestId('repair-run.cancel').focus();
  await page.keyboard.press('Enter');
  const draft = page.getByTestId('repair-draft');
  await expect(draft.getByTestId('repair-preview')).toBeVisible();
  // The focused element is inside the draft (its reason field, its heading, or the panel itself).
  expect(await draft.evaluate((d) => d.contains(document.activeElement))).toBe(true);
});

test('closing a repair draft from the keyboard returns focus to the button that opened it', async ({
  page,
  request,
}) => {
  const runId = await startWaitingReservation(request);
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Waiting');
  await page.getByTestId('repair-run.cancel').focus();
  await page.keyboard.press('Enter');
  const draft = page.getByTestId('repair-draft');
  await expect(draft.getByTestId('repair-preview')).toBeVisible();
  await draft.getByRole('button', { name: 'Close' }).focus();
  await page.keyboard.press('Enter');
  await expect(draft).toHaveCount(0);
  expect(await focused(page)).toBe('repair-run.cancel');
});

test('applying a repair draft from the keyboard keeps focus in the draft, on its outcome', async ({
  page,
  request,
}) => {
  const runId = await startWaitingReservation(request);
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Waiting');
  await page.getByTestId('repair-run.cancel').click();
  const draft = page.getByTestId('repair-draft');
  await expect(draft.getByTestId('repair-preview')).toBeVisible();
  await draft.getByTestId('repair-reason').focus();
  await page.keyboard.type('customer called to cancel, keyboard only');
  await expect(draft.getByTestId('repair-apply')).toBeEnabled();
  await page.keyboard.press('Enter');
  await expect(draft.getByTestId('repair-applied')).toBeVisible();
  // Focus did not fall back to the document body (the next Tab would start again at the top bar).
  expect(await focused(page)).not.toBe('BODY');
  expect(await draft.evaluate((d) => d.contains(document.activeElement))).toBe(true);
});
