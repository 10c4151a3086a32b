import { startDemoStack, type DemoStack } from '../fixtures/start-demo-stack.ts';
import { expect, test } from '../fixtures/test.ts';

// The shared stack runs no message feed, and nothing in the API delivers process messages. So this
// file starts its own control plane WITH the demo feed (which sends a poison note at once, and offers
// it again every 3 s like a broker) and a 1 s quarantine budget, plus the built console in front of it.

test.describe('a quarantined instance, fed by the demo message feed', () => {
  let stack: DemoStack | null = null;
  // eslint-disable-next-line no-empty-pattern
  test.beforeAll(async ({}, testInfo) => {
    testInfo.setTimeout(180_000);
    stack = await startDemoStack();
  });
  test.afterAll(async () => {
    await stack?.stop();
  });

  test('is counted on the Quarantined tab and listed there; its page says what it stopped on, what to do, and its history', async ({
    page,
  }) => {
    if (!stack) throw new Error('the demo stack did not start');
    await page.context().addCookies([{ name: 'sagaflow_session', value: stack.sessionCookie, url: stack.baseUrl }]);
    await page.goto(`${stack.baseUrl}/instances`);
    await expect(page.getByRole('heading', { name: 'Instances' })).toBeVisible();
    // The outbox behind the processes says how much waits to be published (the demo services ack fast).
    await expect(page.getByTestId('outbox-lag')).toContainText(/^Outbox: /);
    // The poison note is offered again 3 s after it first failed: past the 1 s budget, it quarantines.
    await expect(page.getByTestId('quarantined-count')).toHaveText(/^[1-9]\d*\+?$/, { timeout: 30_000 });
    await page.getByTestId('tab-quarantined').click();
    await expect(page).toHaveURL(/\/instances\?status=QUARANTINED$/);

    const row = page.getByTestId('instance-row').first();
    await expect(row).toContainText('QUARANTINED');
    await expect(row).toContainText('demo.fulfilment');
    await expect(row.getByTestId('failure-summary')).toContainText('cannot handle note "poison: unparseable');
    const key = (await row.getByRole('link').textContent()) ?? '';
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    await row.getByRole('link').click();

    await expect(page).toHaveURL(/\/instances\/[0-9a-f-]{36}$/);
    await expect(page.getByTestId('instance-status')).toHaveText('QUARANTINED');
    const banner = page.getByTestId('failure-banner');
    await expect(banner.getByRole('heading')).toHaveText(/^Quarantined: /);
    await expect(banner.getByTestId('failure-message-id')).toContainText(`CustomerNoteAdded with id note-${key}`);
    await expect(banner.getByTestId('failure-error')).toHaveText(/^PoisonNoteError: cannot handle note "poison: /);
    await expect(banner.getByTestId('failure-hint')).toContainText('then release the instance');
    await expect(banner.getByRole('button')).toHaveCount(0);

    const history = page.getByTestId('history-row');
    await expect(history.first()).toHaveAttribute('data-outcome', 'quarantined');
    await expect(history.first()).toContainText(`note-${key}`);
    await expect(history.first().getByTestId('history-outcome')).toHaveText('Quarantined');
    await expect(page.getByTestId('operator-command')).toHaveCount(2);
    await expect(page.getByTestId('commands-summary')).toContainText('None applies: the instance is QUARANTINED');
  });
});
