import { randomUUID } from 'node:crypto';
import { mutateViaConsole, queryViaConsole, savedSessionCookie } from '../fixtures/sign-in-accounts.ts';
import { expect, startWaitingReservation, test } from '../fixtures/test.ts';

/**
 * Review 42: at 3 a.m. the on-call engineer asks "who wanted to terminate this run, and why was it
 * refused?". The audit trail's Target filter takes a run id ("run or instance id"). An operator drafted a
 * terminate of the run (held for a second operator, ADR 0020) and a second operator rejected it: both are
 * rows of the trail (ADR 0105), and both are about this run.
 */
test('the audit trail filtered by a run lists the terminate drafted on it and its rejection', async ({
  page,
  request,
  baseURL,
}) => {
  const base = baseURL ?? '';
  const runId = await startWaitingReservation(request);
  const draftReason = `r42 duplicate booking ${randomUUID().slice(0, 8)}`;
  const drafted = (await mutateViaConsole(base, savedSessionCookie('operator'), 'repairs.applyOne', {
    kind: 'run.terminate',
    target: { runId },
    expected: { runStatus: 'Waiting' },
    reason: draftReason,
    idempotencyKey: randomUUID(),
  })) as { result: { data: { status: string; approvalId: string } } };
  expect(drafted.result.data.status).toBe('awaiting_approval');
  const rejectReason = `r42 not a duplicate ${randomUUID().slice(0, 8)}`;
  await mutateViaConsole(base, savedSessionCookie('approver'), 'approvals.reject', {
    id: drafted.result.data.approvalId,
    reason: rejectReason,
  });
  // Both rows are in the trail (found by what they are).
  const recorded = await queryViaConsole<{ items: { action: string; reason: string | null }[] }>(
    base,
    savedSessionCookie('operator'),
    'audit.page',
    { source: 'repair', limit: 50 },
  );
  expect(recorded.items.map((i) => i.reason)).toEqual(expect.arrayContaining([draftReason, rejectReason]));

  await page.goto(`/audit?target=${runId}`);
  const entries = page.getByTestId('audit-entry');
  // The run's start is there: the filter has answered.
  await expect(entries.filter({ hasText: 'run_started' })).toHaveCount(1);
  await expect.soft(entries.filter({ hasText: draftReason }), 'the drafted terminate, under its run').toHaveCount(1);
  await expect(entries.filter({ hasText: rejectReason }), 'its rejection, under its run').toHaveCount(1);
});
