import { randomUUID } from 'node:crypto';
import { storageStatePath } from '../fixtures/accounts.ts';
import { saveScreenshot } from '../fixtures/page-checks.ts';
import { expect, startRunViaApi, startWaitingReservation, test } from '../fixtures/test.ts';

/**
 * Issue 10 E2E, ADR 0020: a two-person command waits for a second operator. The operator terminates
 * a waiting run from its page; the default approval policy holds it; the drafter's queue shows it
 * without buttons; a second operator approves it from the queue and the run is Terminated.
 */
test('a terminate waits for a second operator, who approves it from the queue; the run is Terminated', async ({
  page,
  request,
  browser,
}, testInfo) => {
  // demo.reservation waits (up to 30 s) for its `confirm` signal.
  const runId = await startRunViaApi(request, { flowName: 'demo.reservation', input: { orderId: randomUUID() } });
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Waiting');
  await page.getByTestId('repair-run.terminate').click();
  const draft = page.getByTestId('repair-draft');
  await expect(draft.getByTestId('repair-preview')).toContainText('Terminated');
  await draft.getByTestId('repair-reason').fill('duplicate booking, the guest booked twice');
  await draft.getByTestId('repair-apply').click();

  const sent = draft.getByTestId('repair-awaiting-approval');
  await expect(sent).toContainText('Sent for approval');
  await expect(page.getByTestId('run-status')).toHaveText('Waiting');

  // The overview's "needs attention" counts it and links to the queue (other specs' may wait there too).
  const overview = await page.context().newPage();
  await overview.goto('/');
  const awaiting = overview.getByTestId('needs-attention').getByTestId('attention-approvals');
  await expect(awaiting).toContainText("a second operator's approval");
  expect(Number(await awaiting.getAttribute('data-count'))).toBeGreaterThanOrEqual(1);
  await saveScreenshot(overview, testInfo, 'overview-approvals-waiting');
  await awaiting.getByRole('link').click();
  await expect(overview).toHaveURL(/\/approvals$/);
  await expect(overview.getByTestId('approval').filter({ hasText: runId.slice(0, 8) })).toHaveCount(1);
  await overview.close();

  // The drafter follows the link: the approval is there, without buttons for them.
  await sent.getByRole('link', { name: 'See it in the approvals queue' }).click();
  await expect(page).toHaveURL(/\/approvals\?id=/);
  const mine = page.getByTestId('approval').filter({ hasText: runId.slice(0, 8) });
  await expect(mine.getByTestId('approval-drafter')).toHaveText('e2e-operator');
  await expect(mine.getByTestId('approval-own')).toBeVisible();
  await expect(mine.getByTestId('approval-approve')).toHaveCount(0);
  await saveScreenshot(page, testInfo, 'approvals-queue-drafter');

  // A second operator approves it.
  const approverContext = await browser.newContext({ storageState: storageStatePath('approver') });
  const approver = await approverContext.newPage();
  await approver.goto('/approvals');
  await expect(approver.getByTestId('signed-in-role')).toHaveText('operator');
  const waiting = approver.getByTestId('approval').filter({ hasText: runId.slice(0, 8) });
  await expect(waiting.getByTestId('approval-preview')).toContainText('Terminated');
  await saveScreenshot(approver, testInfo, 'approvals-queue-approver');
  await waiting.getByTestId('approval-approve').click();
  // Applied, it leaves the waiting queue; the decided view shows who approved it.
  await expect(waiting).toHaveCount(0);
  await approver.goto('/approvals?view=decided');
  const decided = approver.getByTestId('approval').filter({ hasText: runId.slice(0, 8) });
  await expect(decided.getByTestId('approval-status')).toHaveText('applied');
  await expect(decided).toContainText('e2e-approver');
  await saveScreenshot(approver, testInfo, 'approvals-decided');
  await approverContext.close();

  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Terminated');
  await expect(page.getByTestId('events-timeline')).toContainText('repair.applied');
});

test.describe('a viewer', () => {
  test.use({ storageState: storageStatePath('viewer') });

  test('sees the queue and the policy, but no approve, reject or policy controls', async ({
    page,
    playwright,
    baseURL,
  }, testInfo) => {
    const operator = await playwright.request.newContext({ storageState: storageStatePath('operator') });
    const runId = await startWaitingReservation(operator);
    const drafted = await operator.post(`${baseURL}/api/trpc/repairs.applyOne`, {
      data: {
        kind: 'run.terminate',
        target: { runId },
        expected: { runStatus: 'Waiting' },
        reason: 'seen by a viewer',
        idempotencyKey: randomUUID(),
      },
    });
    expect(drafted.status(), await drafted.text()).toBe(200);
    await operator.dispose();

    await page.goto('/approvals');
    await expect(page.getByTestId('signed-in-role')).toHaveText('viewer');
    const card = page.getByTestId('approval').filter({ hasText: runId.slice(0, 8) });
    await expect(card.getByTestId('approval-status')).toHaveText('pending');
    await expect(page.getByTestId('approval-approve')).toHaveCount(0);
    await expect(page.getByTestId('approval-reject')).toHaveCount(0);
    await expect(page.getByTestId('approval-policy-summary')).toContainText('run.terminate');
    await expect(page.getByTestId('approval-policy-form')).toHaveCount(0);
    await saveScreenshot(page, testInfo, 'approvals-queue-viewer');
  });
});

test.describe('an admin', () => {
  test.use({ storageState: storageStatePath('admin') });

  test('edits the approval policy on the approvals page; the summary says what now waits', async ({
    page,
  }, testInfo) => {
    await page.goto('/approvals');
    await expect(page.getByTestId('signed-in-role')).toHaveText('admin');
    const form = page.getByTestId('approval-policy-form');
    await expect(form.getByTestId('approval-policy-summary')).toContainText('any bulk repair over 10 targets');
    await form.getByTestId('approval-policy-threshold').fill('5');
    await form.getByRole('button', { name: 'Save policy' }).click();
    await expect(form.getByTestId('approval-policy-summary')).toContainText('any bulk repair over 5 targets');
    await expect(form.getByTestId('approval-policy-summary')).toContainText('set by admin');
    await saveScreenshot(page, testInfo, 'approvals-policy-admin');
    // Back to the default threshold: the other specs rely on the default policy.
    await page.getByTestId('approval-policy-threshold').fill('10');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await expect(page.getByTestId('approval-policy-summary')).toContainText('any bulk repair over 10 targets');
  });
});
