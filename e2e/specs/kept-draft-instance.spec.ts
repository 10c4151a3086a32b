import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expectNoSeriousAxeViolation } from '../fixtures/page-checks.ts';
import { countCalls, endSessionsElsewhere, keptDraftKeys, newOperator, signInOnPage } from '../fixtures/session-end.ts';
import { queryViaConsole } from '../fixtures/sign-in-accounts.ts';
import { startDemoStack, type DemoStack } from '../fixtures/start-demo-stack.ts';
import { expect, test } from '../fixtures/test.ts';

// ADR 0120: a repair draft open on an instance's page (its Repairs, an outbox row, the outbox bulk) when
// the session ends is kept, announced and offered back, never applied by itself (ADR 0117 decision 2).
// The demo traffic at a fast tick quarantines instances; its inventory webhook answers 503, so with one
// attempt each ReserveInventory goes Dead.

interface InstanceRow {
  id: string;
  status: string;
}
interface OutboxRow {
  id: string;
  type: string;
  status: string;
}

function startDownInventory(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(503).end('inventory is down for maintenance'));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/inventory` }),
    ),
  );
}

test.use({ storageState: { cookies: [], origins: [] } });

test.describe('drafts on an instance’s page kept over an ended session', () => {
  let stack: DemoStack | null = null;
  let inventory: Server | null = null;
  // eslint-disable-next-line no-empty-pattern
  test.beforeAll(async ({}, testInfo) => {
    testInfo.setTimeout(180_000);
    const down = await startDownInventory();
    inventory = down.server;
    stack = await startDemoStack({
      intervalMs: 500,
      controlEnv: {
        SAGAFLOW_ENGINE_CONFIG: JSON.stringify({
          processes: { quarantine_after_seconds: 1 },
          outbox: { max_attempts: 1, poll_interval_ms: 200 },
        }),
        SAGAFLOW_OUTBOX_ROUTES: JSON.stringify({
          'demo.inventory': { kind: 'webhook', url: down.url, secret: 'e2e-kept-draft-secret', timeout_ms: 2000 },
        }),
      },
    });
  });
  test.afterAll(async () => {
    await stack?.stop();
    inventory?.close();
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
  const detail = (id: string) => query<{ instance: InstanceRow; outbox: OutboxRow[] }>('instances.get', { id });
  async function waitFor<T>(what: string, find: () => Promise<T | undefined>): Promise<T> {
    let found: T | undefined;
    await expect
      .poll(async () => (found = await find()) !== undefined, {
        message: `waiting for ${what}`,
        timeout: 120_000,
        intervals: [1000],
      })
      .toBe(true);
    if (found === undefined) throw new Error(`no ${what}`);
    return found;
  }

  test('a release drafted on a quarantined instance is announced, offered again as typed, and applied once', async ({
    page,
  }) => {
    test.setTimeout(180_000);
    const base = demo().baseUrl;
    const { name, first, second } = await newOperator(base, demo().sessionCookie);
    const target = await waitFor(
      'a quarantined instance',
      async () => (await instances({ status: ['QUARANTINED'] }))[0],
    );

    await page.goto(`${base}/sign-in?next=${encodeURIComponent(`/instances/${target.id}`)}`);
    await signInOnPage(page, name, first);
    await expect(page.getByTestId('instance-status')).toHaveText('QUARANTINED');
    await page.getByTestId('release-skip').click();
    const draft = page.getByTestId('instance-repairs').getByTestId('repair-draft');
    await expect(draft.getByTestId('repair-preview')).toContainText('QUARANTINED → ACTIVE');
    const reason = 'the note is junk, ticket 4415';
    await draft.getByTestId('repair-reason').fill(reason);

    await endSessionsElsewhere(base, name, first, second);
    await page.waitForURL(/\/sign-in\?/, { timeout: 30_000 });
    await expect(page.getByTestId('sign-in-notice')).toContainText(`The repair draft ${name} had open was not applied`);

    await signInOnPage(page, name, second);
    await page.waitForURL(new RegExp(`/instances/${target.id}$`));
    await expect(draft.getByTestId('repair-restored')).toContainText('it was not applied');
    await expect(draft).toHaveAttribute('data-kind', 'instance.release');
    await expect(draft.getByTestId('repair-reason')).toHaveValue(reason);
    await expect(draft.getByTestId('repair-reason')).toBeFocused();
    // Previewed again, not applied.
    await expect(draft.getByTestId('repair-preview')).toContainText('QUARANTINED → ACTIVE');
    await expect(page.getByTestId('instance-status')).toHaveText('QUARANTINED');
    expect((await detail(target.id)).instance.status).toBe('QUARANTINED');
    await expectNoSeriousAxeViolation(page, ['#repairs']);

    const applies = countCalls(page, 'repairs.applyOne');
    await draft.getByTestId('repair-apply').click();
    await expect(draft.getByTestId('repair-applied')).toBeVisible();
    expect(applies()).toBe(1);
    expect(await keptDraftKeys(page)).toEqual([]);
    await page.reload();
    await expect(page.getByTestId('instance-status')).not.toHaveText('QUARANTINED');
    await expect(page.getByTestId('repair-draft')).toHaveCount(0);
  });

  test('an outbox row’s draft and the outbox bulk draft, open together, both come back; a reload keeps neither', async ({
    page,
  }) => {
    test.setTimeout(180_000);
    const base = demo().baseUrl;
    const { name, first, second } = await newOperator(base, demo().sessionCookie);
    const found = await waitFor('a Dead ReserveInventory', async () => {
      for (const i of await instances({})) {
        const row = (await detail(i.id)).outbox.find((o) => o.type === 'ReserveInventory' && o.status === 'Dead');
        if (row) return { instanceId: i.id, row };
      }
      return undefined;
    });
    const page_ = `/instances/${found.instanceId}`;

    await page.goto(`${base}/sign-in?next=${encodeURIComponent(page_)}`);
    await signInOnPage(page, name, first);
    const outbox = page.getByTestId('instance-outbox');
    const deadRow = outbox.locator(`[data-testid="outbox-row"][data-outbox-id="${found.row.id}"]`);
    await expect(deadRow).toHaveAttribute('data-status', 'Dead');
    await deadRow.getByTestId('outbox-requeue').click();
    const draft = outbox.getByTestId('repair-draft');
    await expect(draft.getByTestId('repair-preview')).toContainText('Dead → Pending');
    await draft.getByTestId('repair-reason').fill('row: inventory is back, ticket 4416');
    await deadRow.getByTestId('outbox-select').check();
    await outbox.getByTestId('bulk-preview').click();
    const bulk = outbox.getByTestId('bulk-draft');
    await expect(bulk.getByTestId('bulk-item').first()).toBeVisible();
    await bulk.getByTestId('bulk-reason').fill('bulk: inventory is back, ticket 4417');
    expect(await keptDraftKeys(page)).toHaveLength(2);

    await endSessionsElsewhere(base, name, first, second);
    await page.waitForURL(/\/sign-in\?/, { timeout: 30_000 });
    await expect(page.getByTestId('sign-in-notice')).toContainText(`The repair draft ${name} had open was not applied`);

    await signInOnPage(page, name, second);
    await page.waitForURL(new RegExp(`${page_}$`));
    await expect(draft.getByTestId('repair-restored')).toBeVisible();
    await expect(draft).toHaveAttribute('data-kind', 'outbox.requeue');
    await expect(draft.getByTestId('repair-reason')).toHaveValue('row: inventory is back, ticket 4416');
    await expect(draft.getByTestId('repair-preview')).toContainText('Dead → Pending');
    await expect(bulk.getByTestId('repair-restored')).toBeVisible();
    await expect(bulk.getByTestId('bulk-item')).toHaveAttribute('data-target-id', found.row.id);
    await expect(bulk.getByTestId('bulk-reason')).toHaveValue('bulk: inventory is back, ticket 4417');
    // Nothing was applied by itself.
    await expect(deadRow).toHaveAttribute('data-status', 'Dead');
    await expectNoSeriousAxeViolation(page, ['#outbox']);

    // A plain reload is not a session end: neither is offered again.
    await page.reload();
    await expect(deadRow).toHaveAttribute('data-status', 'Dead');
    await expect(outbox.getByTestId('repair-draft')).toHaveCount(0);
    await expect(outbox.getByTestId('bulk-draft')).toHaveCount(0);
    expect(await keptDraftKeys(page)).toEqual([]);
  });
});
