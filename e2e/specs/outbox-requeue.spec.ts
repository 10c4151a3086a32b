import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expectNoSeriousAxeViolation, expectNoSideScroll, saveScreenshot } from '../fixtures/page-checks.ts';
import { accounts } from '../fixtures/accounts.ts';
import { mutateViaConsole, queryViaConsole, signInViaConsole } from '../fixtures/sign-in-accounts.ts';
import { startDemoStack, type DemoStack } from '../fixtures/start-demo-stack.ts';
import { expect, test } from '../fixtures/test.ts';

// A control plane with the demo traffic whose inventory commands go to a webhook this spec serves:
// down (503) at first, so with one attempt each ReserveInventory goes Dead; then up, and requeued.

interface OutboxRow {
  id: string;
  messageId: string;
  type: string;
  status: string;
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

test.describe('requeue a Dead outbox message from the instance page', () => {
  let stack: DemoStack | null = null;
  let inventory: Awaited<ReturnType<typeof startInventory>> | null = null;
  // eslint-disable-next-line no-empty-pattern
  test.beforeAll(async ({}, testInfo) => {
    testInfo.setTimeout(180_000);
    inventory = await startInventory();
    stack = await startDemoStack({
      intervalMs: 2000,
      controlEnv: {
        SAGAFLOW_ENGINE_CONFIG: JSON.stringify({
          processes: { quarantine_after_seconds: 1 },
          outbox: { max_attempts: 1, poll_interval_ms: 200 },
        }),
        SAGAFLOW_OUTBOX_ROUTES: JSON.stringify({
          'demo.inventory': { kind: 'webhook', url: inventory.url, secret: 'e2e-requeue-secret', timeout_ms: 2000 },
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

  test('an operator sees why a message died, requeues it with a reason, and the row turns Published', async ({
    page,
    browser,
  }, testInfo) => {
    test.setTimeout(180_000);
    // An instance whose ReserveInventory used up its one attempt against the 503.
    let found: { instanceId: string; row: OutboxRow } | undefined;
    await expect
      .poll(
        async () => {
          const list = await query<{ items: { id: string }[] }>('instances.page', {
            processName: 'demo.fulfilment',
            limit: 50,
          });
          for (const i of list.items) {
            const d = await query<{ outbox: OutboxRow[] }>('instances.get', { id: i.id });
            const row = d.outbox.find((o) => o.type === 'ReserveInventory' && o.status === 'Dead');
            if (row) {
              found = { instanceId: i.id, row };
              return true;
            }
          }
          return false;
        },
        { message: 'waiting for a Dead ReserveInventory', timeout: 120_000, intervals: [1000] },
      )
      .toBe(true);
    const { instanceId, row } = found!;

    // A viewer sees the Dead row and why it died, but no Requeue.
    const { name, password } = accounts.viewer;
    await mutateViaConsole(demo().baseUrl, demo().sessionCookie, 'operators.create', {
      name,
      displayName: name,
      role: 'viewer',
      password,
    });
    const viewer = await browser.newContext();
    await viewer.addCookies([
      { name: 'sagaflow_session', value: await signInViaConsole(demo().baseUrl, 'viewer'), url: demo().baseUrl },
    ]);
    const viewerPage = await viewer.newPage();
    await viewerPage.goto(`${demo().baseUrl}/instances/${instanceId}`);
    const seen = viewerPage.locator(`[data-testid="outbox-row"][data-outbox-id="${row.id}"]`);
    await expect(seen.getByTestId('outbox-last-error')).toContainText('503');
    await expect(viewerPage.getByTestId('dead-outbox-notice')).toContainText('An operator can requeue it');
    await expect(viewerPage.getByTestId('outbox-requeue')).toHaveCount(0);
    await viewer.close();

    await page.context().addCookies([{ name: 'sagaflow_session', value: demo().sessionCookie, url: demo().baseUrl }]);
    await page.goto(`${demo().baseUrl}/instances/${instanceId}`);
    const outbox = page.getByTestId('instance-outbox');
    const deadRow = outbox.locator(`[data-testid="outbox-row"][data-outbox-id="${row.id}"]`);
    await expect(deadRow).toHaveAttribute('data-status', 'Dead');
    await expect(deadRow.getByTestId('outbox-last-error')).toContainText('503');
    await expect(outbox.getByTestId('dead-outbox-notice')).toContainText('requeue it');
    // The Repairs section at the top points there instead of saying nothing applies.
    await expect(page.getByTestId('dead-outbox-pointer')).toContainText('A message it sent is Dead');
    await expectNoSeriousAxeViolation(page, ['#outbox']);

    // The downstream is fixed; the operator requeues the message from its row.
    inventory!.state.up = true;
    await deadRow.getByRole('button', { name: 'Requeue ReserveInventory to demo.inventory' }).click();
    const draft = outbox.getByTestId('repair-draft');
    await expect(draft).toHaveAttribute('data-kind', 'outbox.requeue');
    await expect(draft.getByTestId('draft-expected')).toHaveText('status Dead, attempts 1');
    await expect(draft.getByTestId('repair-preview')).toContainText('Dead → Pending');
    await expect(draft.getByTestId('repair-preview')).toContainText(
      `sends ReserveInventory to demo.inventory again on the publisher's next pass, with the same message id ${row.messageId}`,
    );
    await expect(draft.getByTestId('repair-apply')).toBeDisabled();
    await expectNoSeriousAxeViolation(page, ['#outbox']);
    await saveScreenshot(page, testInfo, 'outbox-requeue-preview');
    await draft.getByTestId('repair-reason').fill('inventory is back after maintenance');
    await draft.getByTestId('repair-apply').click();
    await expect(draft.getByTestId('repair-applied')).toBeVisible();

    // The page refreshes: the row was published once more, by the control plane's own publisher.
    await expect(deadRow).toHaveAttribute('data-status', 'Published', { timeout: 30_000 });
    await expect(deadRow.getByRole('button', { name: /Requeue/ })).toHaveCount(0);
    expect(inventory!.got.filter((id) => id === row.messageId)).toHaveLength(1);
    await expectNoSideScroll(page);
    await saveScreenshot(page, testInfo, 'outbox-requeue-published');
  });
});
