import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { Page } from '@playwright/test';
import { expectNoSeriousAxeViolation, expectNoSideScroll, saveScreenshot } from '../fixtures/page-checks.ts';
import { accounts } from '../fixtures/accounts.ts';
import { mutateViaConsole, queryViaConsole, signInViaConsole } from '../fixtures/sign-in-accounts.ts';
import { startDemoStack, type DemoStack } from '../fixtures/start-demo-stack.ts';
import { expect, test } from '../fixtures/test.ts';

// A control plane with the demo traffic whose inventory commands go to a webhook this spec serves: down
// (503) at first, so with one attempt each order's ReserveInventory goes Dead. Several Dead rows are
// requeued as ONE bulk from the console (ADR 0104), and published once more by the real publisher.

interface DeadRow {
  id: string;
  messageId: string;
  type: string;
  destination: string;
  status: string;
  attempts: number;
  sourceId: string;
}

/** The inventory service: answers 503 until `up`, then 204; keeps the message ids it took. */
function startInventory(): Promise<{ server: Server; url: string; state: { up: boolean }; got: string[] }> {
  const got: string[] = [];
  const state = { up: false };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (!state.up) return res.writeHead(503).end('inventory is down for maintenance');
      got.push(String(req.headers['x-sagaflow-message-id']));
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/inventory`, state, got }),
    ),
  );
}

test.describe('requeue several Dead outbox messages as one bulk', () => {
  let stack: DemoStack | null = null;
  let inventory: Awaited<ReturnType<typeof startInventory>> | null = null;
  // eslint-disable-next-line no-empty-pattern
  test.beforeAll(async ({}, testInfo) => {
    testInfo.setTimeout(180_000);
    inventory = await startInventory();
    stack = await startDemoStack({
      intervalMs: 1000,
      controlEnv: {
        SAGAFLOW_ENGINE_CONFIG: JSON.stringify({
          processes: { quarantine_after_seconds: 1 },
          outbox: { max_attempts: 1, poll_interval_ms: 200 },
        }),
        SAGAFLOW_OUTBOX_ROUTES: JSON.stringify({
          'demo.inventory': {
            kind: 'webhook',
            url: inventory.url,
            secret: 'e2e-bulk-requeue-secret',
            timeout_ms: 2000,
          },
        }),
      },
    });
  });
  test.afterAll(async () => {
    await stack?.stop();
    inventory?.server.close();
  });

  const demo = (): DemoStack => {
    if (!stack) throw new Error('the demo stack did not start');
    return stack;
  };
  const query = <T>(path: string, input: unknown) =>
    queryViaConsole<T>(demo().baseUrl, demo().sessionCookie, path, input);
  const mutate = (path: string, input: unknown, cookie = demo().sessionCookie) =>
    mutateViaConsole(demo().baseUrl, cookie, path, input);
  /** At least `n` Dead ReserveInventory rows none of which is in `not`, once the publisher has given up on them. */
  const deadRows = async (n: number, not: readonly string[] = []): Promise<DeadRow[]> => {
    let rows: DeadRow[] = [];
    await expect
      .poll(
        async () => {
          const all = await query<DeadRow[]>('outbox.dead', { destination: 'demo.inventory' });
          rows = all.filter((r) => r.type === 'ReserveInventory' && !not.includes(r.id));
          return rows.length >= n;
        },
        { message: `waiting for ${n} Dead ReserveInventory rows`, timeout: 120_000, intervals: [1000] },
      )
      .toBe(true);
    return rows.slice(0, n);
  };
  /** Waits until the row is Published; returns it. */
  const published = async (id: string) => {
    await expect
      .poll(async () => (await query<{ status: string }>('outbox.get', { id })).status, { timeout: 30_000 })
      .toBe('Published');
    return query<{ status: string; attempts: number }>('outbox.get', { id });
  };
  const requeueAudit = (id: string) =>
    query<{ items: { action: string; outcome: string; reason: string; actor: string }[] }>('audit.page', {
      source: 'repair',
      command: 'outbox.requeue',
      target: id,
    });
  const signIn = async (page: Page) =>
    page.context().addCookies([{ name: 'sagaflow_session', value: demo().sessionCookie, url: demo().baseUrl }]);

  test('after an outage an operator ticks Dead rows across instances and requeues them in one bulk; a row sent meanwhile is left out', async ({
    page,
  }, testInfo) => {
    test.setTimeout(180_000);
    const rows = await deadRows(3);
    await signIn(page);
    await page.goto(`${demo().baseUrl}/instances`);
    const list = page.getByTestId('dead-outbox');
    await expect(list).toContainText('Dead outbox messages');
    // Opened and ticked from the keyboard.
    await list.locator('summary').focus();
    await page.keyboard.press('Enter');
    for (const row of rows) {
      const tick = list
        .locator(`[data-testid="dead-outbox-row"][data-outbox-id="${row.id}"]`)
        .getByRole('checkbox', { name: `Select ReserveInventory to demo.inventory, message ${row.messageId}` });
      await tick.focus();
      await page.keyboard.press('Space');
      await expect(tick).toBeChecked();
    }
    await expect(list.getByTestId('selection-bar')).toContainText('3 outbox rows selected');

    // The inventory service is back; another operator requeues the third row on its own meanwhile, and it is sent.
    inventory!.state.up = true;
    const [first, second, sentMeanwhile] = rows as [DeadRow, DeadRow, DeadRow];
    await mutate('repairs.applyOne', {
      kind: 'outbox.requeue',
      target: { outboxId: sentMeanwhile.id },
      expected: { status: 'Dead', attempts: sentMeanwhile.attempts },
      reason: 'requeued by hand',
      idempotencyKey: randomUUID(),
    });
    await published(sentMeanwhile.id);
    await expect(list.locator(`[data-testid="dead-outbox-row"][data-outbox-id="${sentMeanwhile.id}"]`)).toHaveCount(0);

    await list.getByRole('button', { name: 'Preview requeue for 3 outbox rows' }).click();
    const bulk = list.getByTestId('bulk-draft');
    await expect(bulk).toContainText(
      'Requeue for 2 outbox rows; 1 outbox row left out (1 left this list after it was ticked)',
    );
    await expect(bulk.getByTestId('bulk-item')).toHaveCount(2);
    for (const row of [first, second]) {
      const item = bulk.locator(`[data-testid="bulk-item"][data-target-id="${row.id}"]`);
      await expect(item).toContainText('status Dead, attempts 1');
      await expect(item.getByTestId('bulk-item-preview')).toHaveText('would apply');
    }
    await expectNoSeriousAxeViolation(page, ['[data-testid="dead-outbox"]']);
    await saveScreenshot(page, testInfo, 'outbox-bulk-requeue-preview');
    await bulk.getByTestId('bulk-reason').fill('inventory is back after the outage');
    await bulk.getByTestId('bulk-apply').click();
    await expect(bulk.getByTestId('bulk-applied')).toHaveText('Applied to 2 of 2.');
    for (const row of [first, second])
      await expect(bulk.locator(`[data-testid="bulk-item"][data-target-id="${row.id}"]`)).toHaveAttribute(
        'data-outcome',
        'applied',
      );

    // Each was published once more by the control plane's own publisher, under its own message id, and audited.
    for (const row of [first, second]) {
      expect(await published(row.id)).toMatchObject({ status: 'Published', attempts: 1 });
      expect(inventory!.got.filter((m) => m === row.messageId)).toHaveLength(1);
      expect((await requeueAudit(row.id)).items.map((e) => [e.outcome, e.reason])).toEqual([
        ['applied', 'inventory is back after the outage'],
      ]);
    }
    expect(inventory!.got.filter((m) => m === sentMeanwhile.messageId)).toHaveLength(1);
    expect((await requeueAudit(sentMeanwhile.id)).items.map((e) => e.reason)).toEqual(['requeued by hand']);
    await expectNoSideScroll(page);
  });

  test('on the instance page the Dead rows shown are requeued as one bulk; when the policy gates it, a second operator approves it first', async ({
    page,
  }) => {
    test.setTimeout(180_000);
    const policy = await query<{ gatedCommands: string[]; bulkThreshold: number | null }>('approvalPolicy.get', {});
    await mutate('approvalPolicy.set', { gatedCommands: ['outbox.requeue'], bulkThreshold: policy.bulkThreshold });
    try {
      inventory!.state.up = false;
      const before = (await query<DeadRow[]>('outbox.dead', {})).map((r) => r.id);
      const [row] = (await deadRows(1, before)) as [DeadRow];
      await signIn(page);
      await page.goto(`${demo().baseUrl}/instances/${row.sourceId}`);
      const outbox = page.getByTestId('instance-outbox');
      const shown = outbox.locator(`[data-testid="outbox-row"][data-outbox-id="${row.id}"]`);
      await expect(shown).toHaveAttribute('data-status', 'Dead');
      const all = outbox.getByRole('checkbox', { name: 'Select every Dead row shown' });
      await all.focus();
      await page.keyboard.press('Space');
      await expect(shown.getByTestId('outbox-select')).toBeChecked();
      await expect(outbox.getByTestId('selection-bar')).toContainText('1 outbox row selected');
      await outbox.getByRole('button', { name: 'Preview requeue for 1 outbox row' }).click();
      const bulk = outbox.getByTestId('bulk-draft');
      await expect(bulk.getByTestId('bulk-item-preview')).toHaveText('would apply');
      await expectNoSeriousAxeViolation(page, ['#outbox']);
      await bulk.getByTestId('bulk-reason').fill('inventory redeployed');
      await bulk.getByTestId('bulk-reason').press('Enter');
      const waiting = bulk.getByTestId('repair-awaiting-approval');
      await expect(waiting).toContainText('a second operator must approve this bulk');
      const href = await waiting.getByRole('link').getAttribute('href');
      const approvalId = new URL(href!, demo().baseUrl).searchParams.get('id');
      // Nothing changed until it is approved.
      expect((await query<{ status: string }>('outbox.get', { id: row.id })).status).toBe('Dead');
      expect((await requeueAudit(row.id)).items.filter((e) => e.outcome === 'applied')).toEqual([]);

      inventory!.state.up = true;
      const { name, password } = accounts.secondAdmin;
      await mutate('operators.create', { name, displayName: name, role: 'admin', password });
      await mutate('approvals.approve', { id: approvalId }, await signInViaConsole(demo().baseUrl, 'secondAdmin'));
      await expect(shown).toHaveAttribute('data-status', 'Published', { timeout: 30_000 });
      expect(inventory!.got.filter((m) => m === row.messageId)).toHaveLength(1);
      expect((await requeueAudit(row.id)).items.map((e) => [e.outcome, e.reason])).toContainEqual([
        'applied',
        'inventory redeployed',
      ]);
    } finally {
      await mutate('approvalPolicy.set', { gatedCommands: policy.gatedCommands, bulkThreshold: policy.bulkThreshold });
    }
  });
});
