import { randomUUID } from 'node:crypto';
import { storageStatePath } from '../fixtures/accounts.ts';
import { expectNoSideScroll } from '../fixtures/page-checks.ts';
import { mutateViaConsole, savedSessionCookie } from '../fixtures/sign-in-accounts.ts';
import { expect, startWaitingReservation, test } from '../fixtures/test.ts';

/**
 * Review 42: a drafter pastes a 1,000-character reason with no space in it (a log line, a URL). The
 * approver's queue and the audit trail must still show the whole page without sideways scrolling, with the
 * decision buttons on screen.
 */
const longReason = `https://tickets.example/${'x'.repeat(1000)}`.slice(0, 1000);

for (const viewport of [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
]) {
  test.describe(`at ${viewport.width} px`, () => {
    test.use({ storageState: storageStatePath('approver'), viewport });

    test('a 1,000-character reason without spaces neither widens the approvals queue nor hides its buttons', async ({
      page,
      baseURL,
    }) => {
      const runId = await startWaitingReservation(page.request);
      await mutateViaConsole(baseURL ?? '', savedSessionCookie('operator'), 'repairs.applyOne', {
        kind: 'run.terminate',
        target: { runId },
        expected: { runStatus: 'Waiting' },
        reason: longReason,
        idempotencyKey: randomUUID(),
      });
      await page.goto('/approvals');
      const card = page.getByTestId('approval').filter({ hasText: runId.slice(0, 8) });
      await expect(card.getByTestId('approval-preview')).toContainText('Terminated');
      await expect(card).toContainText(longReason.slice(0, 60));
      await expectNoSideScroll(page);
      await card.getByTestId('approval-approve').scrollIntoViewIfNeeded();
      await expect(card.getByTestId('approval-approve')).toBeInViewport();
      await expect(card.getByTestId('approval-reject')).toBeInViewport();

      // The draft is an audit row of its own (its target is the approval): found by what it is.
      await page.goto(`/audit?command=repair_drafted`);
      await expect(
        page
          .getByTestId('audit-entry')
          .filter({ hasText: longReason.slice(0, 60) })
          .first(),
      ).toBeVisible();
      await expectNoSideScroll(page);
    });
  });
}
