import { expect, startWaitingReservation, test } from '../fixtures/test.ts';

/**
 * Review 42: an on-call engineer in Bangalore (UTC+05:30) reads the console beside a log in UTC and a
 * colleague's screenshot from Berlin. A wall-clock time without its zone ("2026-12-06 17:10:04") cannot
 * be compared with either. Every absolute time the console prints should say which zone it is in.
 */
test.use({ timezoneId: 'Asia/Kolkata' });

/** A zone designator: "UTC", "GMT+5:30", "+05:30", "IST" and the like. */
const zone = /\b(UTC|GMT)\b|[+-]\d{2}:?\d{2}\b|\bIST\b|\bZ\b/;

test('absolute times on the run page and in the audit trail name their time zone', async ({ page, request }) => {
  const runId = await startWaitingReservation(request);
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Waiting');
  // The run's facts: Created, Started, Updated, each an absolute time.
  const created = page.locator('dl time').first();
  await expect(created).toBeVisible();
  const createdText = await created.innerText();
  expect(createdText, 'the run page prints its Created time').toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/);
  expect.soft(createdText, `Created "${createdText}" says which time zone it is in`).toMatch(zone);

  await page.goto(`/audit?target=${runId}`);
  const entry = page.getByTestId('audit-entry').first();
  await expect(entry).toBeVisible();
  const at = await entry.locator('time').first().innerText();
  expect(at, `the audit entry's time "${at}" says which time zone it is in`).toMatch(zone);
});
