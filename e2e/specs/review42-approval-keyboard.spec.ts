import { randomUUID } from 'node:crypto';
import type { Page } from '@playwright/test';
import { storageStatePath } from '../fixtures/accounts.ts';
import { mutateViaConsole, savedSessionCookie } from '../fixtures/sign-in-accounts.ts';
import { expect, startWaitingReservation, test } from '../fixtures/test.ts';

/**
 * Review 42: the second operator decides an approval with the keyboard alone. The operator drafts a
 * terminate (held for a second operator by the default policy); the approver opens the queue.
 */
async function pendingTerminate(page: Page, baseUrl: string, reason: string): Promise<string> {
  const runId = await startWaitingReservation(page.request);
  const answer = (await mutateViaConsole(baseUrl, savedSessionCookie('operator'), 'repairs.applyOne', {
    kind: 'run.terminate',
    target: { runId },
    expected: { runStatus: 'Waiting' },
    reason,
    idempotencyKey: randomUUID(),
  })) as { result: { data: { status?: string } } };
  expect(answer.result.data.status).toBe('awaiting_approval');
  return runId;
}

const focusedTestId = (page: Page) =>
  page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? document.activeElement?.tagName);

test.describe('the approver', () => {
  test.use({ storageState: storageStatePath('approver') });

  test('choosing “Reject…” from the keyboard puts focus in the reason it asks for', async ({ page, baseURL }) => {
    const runId = await pendingTerminate(page, baseURL ?? '', 'review 42 keyboard reject');
    await page.goto(`/approvals`);
    const card = page.getByTestId('approval').filter({ hasText: runId.slice(0, 8) });
    await card.getByTestId('approval-reject').focus();
    await page.keyboard.press('Enter');
    await expect(card.getByTestId('approval-reject-reason')).toBeVisible();
    // Focus is on the field the next keystrokes are for, not dropped back to the top of the page.
    expect(await focusedTestId(page)).toBe('approval-reject-reason');
  });

  test('a double click on “Approve and apply” approves once and says it was applied', async ({ page, baseURL }) => {
    const runId = await pendingTerminate(page, baseURL ?? '', 'review 42 double approve');
    const sent: string[] = [];
    // tRPC batches calls made together into one request (`/api/trpc/a,b?batch=1`): count the calls.
    page.on('request', (r) => {
      const procedures = new URL(r.url()).pathname.replace('/api/trpc/', '').split(',');
      sent.push(...procedures.filter((p) => p === 'approvals.approve'));
    });
    await page.goto(`/approvals`);
    const card = page.getByTestId('approval').filter({ hasText: runId.slice(0, 8) });
    await expect(card.getByTestId('approval-approve')).toBeEnabled();
    await card.getByTestId('approval-approve').dblclick();
    // This page has its answer (a batch carries every call made together, so all of them were sent by now).
    await expect(page.getByText(/Approved: |Not applied: /).first()).toBeVisible();
    expect(sent, 'approvals.approve calls sent by one double click').toHaveLength(1);
    await expect(page.getByText(`Approved: run.terminate on run ${runId} is applied.`)).toBeVisible();
    await expect(page.getByRole('alert').filter({ hasText: 'Not applied' })).toHaveCount(0);
  });
});
