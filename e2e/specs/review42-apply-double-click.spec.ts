import { expect, startWaitingReservation, test } from '../fixtures/test.ts';

/**
 * Review 42 (held): review 33 checked a double Enter on a draft's reason. A double click on Apply (a mouse
 * that bounces, an impatient operator) must send the command once too: the browser makes one
 * repairs.applyOne call (counted inside tRPC's batches) and the panel shows the first answer, not the replay's.
 */
test('a double click on Apply sends the repair once and shows it applied, not replayed', async ({ page, request }) => {
  const runId = await startWaitingReservation(request);
  const sent: string[] = [];
  // tRPC batches calls made together into one request (`/api/trpc/a,b?batch=1`): count the calls.
  page.on('request', (r) => {
    const procedures = new URL(r.url()).pathname.replace('/api/trpc/', '').split(',');
    sent.push(...procedures.filter((p) => p === 'repairs.applyOne'));
  });
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Waiting');
  await page.getByTestId('repair-run.cancel').click();
  const draft = page.getByTestId('repair-draft');
  await expect(draft.getByTestId('repair-preview')).toBeVisible();
  await draft.getByTestId('repair-reason').fill('double click on apply');
  await expect(draft.getByTestId('repair-apply')).toBeEnabled();
  await draft.getByTestId('repair-apply').dblclick();
  await expect(draft.getByTestId('repair-applied')).toHaveText(/^Applied\./);
  await expect(page.getByTestId('events-timeline')).toContainText('repair.applied');
  expect(sent).toHaveLength(1);
});
