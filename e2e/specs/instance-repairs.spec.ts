import type { Page } from '@playwright/test';
import { randomUUID } from 'node:crypto';
import { completesAtOnce } from '../fixtures/demo-order-answers.ts';
import { expectNoSeriousAxeViolation, expectNoSideScroll, saveScreenshot } from '../fixtures/page-checks.ts';
import { accounts } from '../fixtures/accounts.ts';
import {
  applyRepairWithApproval,
  mutateViaConsole,
  queryViaConsole,
  signInViaConsole,
} from '../fixtures/sign-in-accounts.ts';
import { startDemoStack, type DemoStack } from '../fixtures/start-demo-stack.ts';
import { expect, test } from '../fixtures/test.ts';

// A control plane with the demo traffic at a fast tick (orders, poison notes, simulated services),
// so quarantined and ManualReview instances appear within a minute or so.

interface InstanceRow {
  id: string;
  correlationKey: string;
  status: string;
  currentState: string;
}
interface InstanceDetail {
  instance: InstanceRow & { version: number };
  history: { outcome: string; messageType: string }[];
}

test.describe('instance repairs on the demo traffic', () => {
  let stack: DemoStack | null = null;
  // eslint-disable-next-line no-empty-pattern
  test.beforeAll(async ({}, testInfo) => {
    testInfo.setTimeout(180_000);
    stack = await startDemoStack({ intervalMs: 500 });
  });
  test.afterAll(async () => {
    await stack?.stop();
  });

  const demo = (): DemoStack => {
    if (!stack) throw new Error('the demo stack did not start');
    return stack;
  };
  const query = <T>(path: string, input: unknown) =>
    queryViaConsole<T>(demo().baseUrl, demo().sessionCookie, path, input);
  const instances = async (input: Record<string, unknown>) =>
    (await query<{ items: InstanceRow[] }>('instances.page', { processName: 'demo.fulfilment', limit: 200, ...input }))
      .items;
  const detail = (id: string) => query<InstanceDetail>('instances.get', { id });
  const open = async (page: Page, id: string, cookie = demo().sessionCookie) => {
    await page.context().addCookies([{ name: 'sagaflow_session', value: cookie, url: demo().baseUrl }]);
    await page.goto(`${demo().baseUrl}/instances/${id}`);
    await expect(page.getByTestId('instance-status')).toBeVisible();
  };
  /** A second admin of the demo stack, who approves what its first admin drafts; returns its session cookie. */
  const secondAdmin = async (): Promise<string> => {
    const { name, password } = accounts.secondAdmin;
    await mutateViaConsole(demo().baseUrl, demo().sessionCookie, 'operators.create', {
      name,
      displayName: name,
      role: 'admin',
      password,
    });
    return signInViaConsole(demo().baseUrl, 'secondAdmin');
  };
  /** Waits until `find` returns an instance (the demo makes them as it goes). */
  const waitFor = async (what: string, find: () => Promise<InstanceRow | undefined>): Promise<InstanceRow> => {
    let found: InstanceRow | undefined;
    await expect
      .poll(async () => (found = await find()) !== undefined, {
        message: `waiting for ${what}`,
        timeout: 120_000,
        intervals: [1000],
      })
      .toBe(true);
    if (!found) throw new Error(`no ${what}`);
    return found;
  };

  test('a quarantined instance: retry previews as failing again; released with skip it applies the payment it kept and completes, the skipped note still readable', async ({
    page,
  }, testInfo) => {
    test.setTimeout(180_000);
    // One whose payment has arrived (and was kept while quarantined) and whose order ships at once.
    const target = await waitFor('a quarantined instance holding its kept payment', async () => {
      for (const row of await instances({ status: ['QUARANTINED'] })) {
        if (!completesAtOnce(row.correlationKey)) continue;
        const d = await detail(row.id);
        if (d.history.some((h) => h.outcome === 'skipped_quarantined' && h.messageType === 'PaymentCaptured'))
          return row;
      }
      return undefined;
    });
    await open(page, target.id);
    await expect(page.getByTestId('instance-status')).toHaveText('QUARANTINED');

    // Retry: the process still throws on the note, so the preview says so and Apply stays off.
    await page.getByTestId('release-retry').click();
    let draft = page.getByTestId('repair-draft');
    await expect(draft.getByTestId('repair-blockers')).toContainText('fails again now');
    await draft.getByTestId('repair-reason').fill('try the note again');
    await expect(draft.getByTestId('repair-apply')).toBeDisabled();
    await saveScreenshot(page, testInfo, 'instance-quarantined-retry-preview');

    // Skip: the preview names the kept payment it will deliver after the release.
    await draft.getByRole('button', { name: 'Close' }).click();
    await page.getByTestId('release-skip').click();
    draft = page.getByTestId('repair-draft');
    await expect(draft.getByTestId('repair-preview')).toContainText('QUARANTINED → ACTIVE');
    await expect(draft.getByTestId('repair-preview')).toContainText(`payment-${target.correlationKey}`);
    await draft.getByTestId('repair-reason').fill('the note is junk; go on with the order');
    await draft.getByTestId('repair-apply').click();
    await expect(draft.getByTestId('repair-applied')).toBeVisible();

    await expect(page.getByTestId('instance-status')).toHaveText('COMPLETED', { timeout: 30_000 });
    const kept = page.getByTestId('kept-message').filter({ hasText: 'skipped by a release' });
    await expect(kept).toHaveAttribute('data-message-id', `note-${target.correlationKey}`);
    await expect(kept).toContainText('poison: unparseable');
    await expect(page.getByTestId('sm-current')).toHaveText('Completed');
    await saveScreenshot(page, testInfo, 'instance-released-completed');
  });

  test('a ManualReview instance: the machine is drawn with it highlighted; its own command runs from its form, and a draft the instance moved under is rejected and redrafted', async ({
    page,
  }, testInfo) => {
    test.setTimeout(180_000);
    const target = await waitFor(
      'an instance in ManualReview',
      async () => (await instances({ status: ['ACTIVE'], state: 'ManualReview' }))[0],
    );
    const shownFrom = (await detail(target.id)).instance.version;
    await open(page, target.id);
    await expect(page.getByTestId('instance-status')).toHaveText('ACTIVE');

    // The state machine: every state drawn, ManualReview highlighted, the edges it took counted.
    const machine = page.getByTestId('state-machine');
    await expect(machine.locator('[data-testid="sm-node"]')).toHaveCount(7);
    await expect(machine.locator('[data-testid="sm-node"][data-current="yes"]')).toHaveAttribute(
      'data-state',
      'ManualReview',
    );
    await expect(machine.getByTestId('sm-current')).toHaveText('ManualReview');
    await expect(
      machine.locator(
        '[data-testid="sm-edge"][data-from="AwaitingPayment"][data-to="ReservingInventory"] [data-testid="sm-edge-taken"]',
      ),
    ).toHaveText('1');
    await saveScreenshot(page, testInfo, 'instance-manual-review');
    await expectNoSeriousAxeViolation(page);

    // The process's own command, from a form generated from its JSON Schema.
    await page.getByTestId('command-AcceptLateBooking').click();
    await page.getByTestId('command-input-shipmentId').fill(`SHP-by-hand-${randomUUID().slice(0, 6)}`);
    await page.getByTestId('draft-command').click();
    const draft = page.getByTestId('repair-draft');
    await expect(draft.getByTestId('repair-preview')).toContainText('ManualReview');
    await expect(draft.getByTestId('repair-preview')).toContainText('Completed');
    // The demo feed may add a customer note to a recent order at any moment (a new version, same
    // state): the draft holds the version the page showed, never an older one.
    const drafted = Number(
      /^state ManualReview, version (\d+)$/.exec((await draft.getByTestId('draft-expected').textContent()) ?? '')?.[1],
    );
    expect(drafted).toBeGreaterThanOrEqual(shownFrom);
    const version = (await detail(target.id)).instance.version;
    expect(drafted).toBeLessThanOrEqual(version);

    // Behind the page's back an admin forces the instance through ManualReview again (a second admin
    // approves it, as the default approval policy asks): a new version.
    await applyRepairWithApproval(demo().baseUrl, demo().sessionCookie, await secondAdmin(), {
      kind: 'instance.force_transition',
      target: { instanceId: target.id },
      expected: { state: 'ManualReview', version },
      to: 'ManualReview',
      reason: 'someone else touched it',
      idempotencyKey: randomUUID(),
    });
    await draft.getByTestId('repair-reason').fill('the carrier did ship it');
    // The page polls the instance, and an open draft is previewed again (ADR 0106): when that refresh comes
    // first (a loaded machine), the draft already says it changed and Apply stays off; otherwise Apply
    // is refused as a conflict. Either way nothing is applied against the old version.
    const stale = draft.getByTestId('repair-stale');
    // A refresh that lands first turns Apply off, and the click then finds nothing to press.
    await draft
      .getByTestId('repair-apply')
      .click({ timeout: 10_000 })
      .catch(() => undefined);
    await expect(draft.getByTestId('repair-conflict').or(stale).first()).toContainText(
      /changed.*now ManualReview, version/,
    );
    const now = (await detail(target.id)).instance.version;
    expect(now).toBeGreaterThan(version);
    await saveScreenshot(page, testInfo, 'instance-command-conflict');

    // One click drafts it again against the state now; applied, the order completes.
    await draft.getByTestId('repair-redraft').click();
    await expect(draft.getByTestId('draft-expected')).toHaveText(/^state ManualReview, version \d+$/);
    const redrafted = Number(/(\d+)$/.exec((await draft.getByTestId('draft-expected').textContent()) ?? '')?.[1]);
    expect(redrafted).toBeGreaterThanOrEqual(now);
    await expect(draft.getByTestId('repair-preview')).toContainText('Completed');
    await draft.getByTestId('repair-reason').fill('the carrier did ship it');
    await draft.getByTestId('repair-apply').click();
    await expect(draft.getByTestId('repair-applied')).toBeVisible();
    await expect(page.getByTestId('instance-status')).toHaveText('COMPLETED');
    await expect(page.locator('[data-testid="history-row"][data-outcome="repair"]')).toHaveCount(2);
    await saveScreenshot(page, testInfo, 'instance-command-applied');
  });

  test('a viewer sees the instance, its machine and its history, and no repair control', async ({ page }) => {
    const { name, password, role } = accounts.viewer;
    await mutateViaConsole(demo().baseUrl, demo().sessionCookie, 'operators.create', {
      name,
      displayName: name,
      role,
      password,
    });
    const viewer = await signInViaConsole(demo().baseUrl, 'viewer');
    const target = await waitFor(
      'a quarantined instance',
      async () => (await instances({ status: ['QUARANTINED'] }))[0],
    );
    await open(page, target.id, viewer);
    await expect(page.getByTestId('signed-in-role')).toHaveText('viewer');
    await expect(page.getByTestId('state-machine')).toBeVisible();
    await expect(page.getByTestId('history-row').first()).toBeVisible();
    await expect(page.getByTestId('instance-repairs')).toHaveCount(0);
    await expect(page.getByTestId('release-skip')).toHaveCount(0);
  });

  test('bulk release from the quarantined list: a preview per instance, one reason, each one’s own outcome', async ({
    page,
  }, testInfo) => {
    test.setTimeout(180_000);
    let two: InstanceRow[] = [];
    await expect
      .poll(async () => (two = (await instances({ status: ['QUARANTINED'] })).slice(0, 2)).length, {
        message: 'waiting for two quarantined instances',
        timeout: 120_000,
        intervals: [1000],
      })
      .toBe(2);
    await page.context().addCookies([{ name: 'sagaflow_session', value: demo().sessionCookie, url: demo().baseUrl }]);
    await page.goto(`${demo().baseUrl}/instances?status=QUARANTINED`);
    for (const i of two)
      await page
        .locator(`[data-testid="instance-row"][data-instance-id="${i.id}"]`)
        .getByRole('checkbox', { name: `Select instance ${i.correlationKey}` })
        .check();
    await expect(page.getByTestId('selection-bar')).toContainText('2 instances selected');
    await page.getByTestId('bulk-kind').selectOption('skip');
    await page.getByTestId('bulk-preview').click();
    const bulk = page.getByTestId('bulk-draft');
    await expect(bulk).toContainText('Release: skip the message for 2 instances');
    await expect(bulk.getByTestId('bulk-item-preview')).toHaveText(['would apply', 'would apply']);
    await bulk.getByTestId('bulk-reason').fill('junk notes; go on with the orders');
    await bulk.getByTestId('bulk-apply').click();
    await expect(bulk.getByTestId('bulk-applied')).toHaveText('Applied to 2 of 2.');
    // Sent, the selection is cleared: the outcomes stay in the panel, the ticks do not linger.
    await expect(page.getByTestId('selection-bar')).toHaveCount(0);
    for (const i of two)
      await expect(bulk.locator(`[data-testid="bulk-item"][data-target-id="${i.id}"]`)).toHaveAttribute(
        'data-outcome',
        'applied',
      );
    await saveScreenshot(page, testInfo, 'instances-bulk-release');
    await expectNoSeriousAxeViolation(page);
    // Each was released on its own, with its own audit row: neither is quarantined any more.
    for (const i of two) expect((await detail(i.id)).instance.status).not.toBe('QUARANTINED');
  });

  test.describe('at 390 px wide', () => {
    test.use({ viewport: { width: 390, height: 844 } });
    test('an instance page does not scroll sideways', async ({ page }, testInfo) => {
      const target = await waitFor('any instance', async () => (await instances({ status: ['ACTIVE'] }))[0]);
      await open(page, target.id);
      await expect(page.getByTestId('state-machine')).toBeVisible();
      await expectNoSideScroll(page);
      await saveScreenshot(page, testInfo, 'instance-390px');
    });
  });
});
