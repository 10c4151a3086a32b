import { randomUUID } from 'node:crypto';
import type { APIRequestContext } from '@playwright/test';
import { storageStatePath } from '../fixtures/accounts.ts';
import { saveScreenshot } from '../fixtures/page-checks.ts';
import { mutateViaConsole, savedSessionCookie } from '../fixtures/sign-in-accounts.ts';
import { expect, startWaitingReservation, test } from '../fixtures/test.ts';

/** Drafts a terminate (held for a second operator by the default policy) as the spec's operator; returns the approval id. */
async function draftTerminate(request: APIRequestContext, baseURL: string, runId: string): Promise<string> {
  const res = await request.post(`${baseURL}/api/trpc/repairs.applyOne`, {
    data: {
      kind: 'run.terminate',
      target: { runId },
      expected: { runStatus: 'Waiting' },
      reason: 'review 33: held for a second operator',
      idempotencyKey: randomUUID(),
    },
  });
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { result: { data: { approvalId: string } } }).result.data.approvalId;
}

test('the drafter’s “see it in the approvals queue” link still shows the approval once a second operator applied it', async ({
  page,
  request,
  baseURL,
}, testInfo) => {
  const runId = await startWaitingReservation(request);
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Waiting');
  await page.getByTestId('repair-run.terminate').click();
  const draft = page.getByTestId('repair-draft');
  await expect(draft.getByTestId('repair-preview')).toContainText('Terminated');
  await draft.getByTestId('repair-reason').fill('duplicate booking');
  await draft.getByTestId('repair-apply').click();
  const sent = draft.getByTestId('repair-awaiting-approval');
  await expect(sent).toContainText('Sent for approval');
  const href = (await sent.getByRole('link', { name: 'See it in the approvals queue' }).getAttribute('href')) ?? '';
  const approvalId = decodeURIComponent(/id=([^&#]+)/.exec(href)?.[1] ?? '');
  expect(approvalId).not.toBe('');

  // The second operator approves it while the drafter's page still shows the link.
  await mutateViaConsole(baseURL ?? '', savedSessionCookie('approver'), 'approvals.approve', { id: approvalId });
  await expect(page.getByTestId('run-status')).toHaveText('Terminated');

  await sent.getByRole('link', { name: 'See it in the approvals queue' }).click();
  await expect(page).toHaveURL(/\/approvals\?id=/);
  // What the link names must be on the page it opens: applied, and by whom. A queue that shows
  // "Nothing waits for approval." instead is a dead end for the drafter.
  const card = page.locator(`[data-testid="approval"][data-approval-id="${approvalId}"]`);
  await expect(page.getByTestId('approvals-empty').or(page.getByTestId('approval')).first()).toBeVisible();
  await saveScreenshot(page, testInfo, 'approval-link-after-decision');
  await expect(card.getByTestId('approval-status')).toHaveText('applied');
  await expect(card).toContainText('e2e-approver');
});

test('a deep link to an approval that does not exist says it was not found, with the id', async ({
  page,
}, testInfo) => {
  const id = randomUUID();
  await page.goto(`/approvals?id=${id}#approval-${id}`);
  await expect(page.getByRole('heading', { name: 'Approvals' })).toBeVisible();
  await expect(page.getByTestId('approvals-empty').or(page.getByTestId('approval').first())).toBeVisible();
  await saveScreenshot(page, testInfo, 'approval-link-unknown');
  // The operator followed a link to one approval: the page must say that one is not there.
  await expect(page.locator('main')).toContainText(id);
  await expect(page.locator('main')).toContainText(/not found|no approval/i);
});

test.describe('a second approver in a tab opened before the first approved', () => {
  test.use({ storageState: storageStatePath('approver') });

  test('clicks approve and is told, and keeps being told, that it was already applied and by whom', async ({
    page,
    baseURL,
    playwright,
  }, testInfo) => {
    const operator = await playwright.request.newContext({ storageState: storageStatePath('operator') });
    const runId = await startWaitingReservation(operator);
    const approvalId = await draftTerminate(operator, baseURL ?? '', runId);
    await operator.dispose();

    await page.goto(`/approvals?id=${approvalId}`);
    const card = page.locator(`[data-testid="approval"][data-approval-id="${approvalId}"]`);
    await expect(card.getByTestId('approval-approve')).toBeVisible();

    // Right after this tab's own refresh, the admin (another operator) approves it; then this tab's
    // approver clicks the button its page still shows.
    await page.waitForResponse((r) => r.url().includes('approvals.list'));
    await mutateViaConsole(baseURL ?? '', savedSessionCookie('admin'), 'approvals.approve', { id: approvalId });
    const answer = page.waitForResponse((r) => r.url().includes('approvals.approve'));
    await card.getByTestId('approval-approve').click();
    // The server did refuse it and said why: what is under test is whether the page keeps saying so.
    const refused = await answer;
    expect(refused.status()).toBe(409);
    expect(await refused.text()).toContain('already applied');

    // The page refreshes after the refusal and again on its own: the answer must survive both.
    await page.waitForResponse((r) => r.url().includes('approvals.list'));
    await page.waitForResponse((r) => r.url().includes('approvals.list'));
    await saveScreenshot(page, testInfo, 'second-approver-after-click');
    await expect(page.locator('main')).toContainText(/already applied/);
    await expect(page.locator('main')).toContainText('admin');
  });
});

test('the drafter cannot approve their own draft even by sending the request from the page: refused, still pending', async ({
  page,
  request,
  baseURL,
}) => {
  const runId = await startWaitingReservation(request);
  const approvalId = await draftTerminate(request, baseURL ?? '', runId);
  await page.goto(`/approvals?id=${approvalId}`);
  const card = page.locator(`[data-testid="approval"][data-approval-id="${approvalId}"]`);
  await expect(card.getByTestId('approval-own')).toBeVisible();
  const answer = await page.evaluate(async (id) => {
    const res = await fetch('/api/trpc/approvals.approve', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id }),
    });
    return { status: res.status, body: await res.text() };
  }, approvalId);
  expect(answer.status, answer.body).toBe(403);
  expect(answer.body).not.toMatch(/at \S+\.(ts|js):\d+|prisma|SELECT /i);
  await page.reload();
  await expect(card.getByTestId('approval-status')).toHaveText('pending');
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('Waiting');
});
