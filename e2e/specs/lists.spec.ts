import { randomUUID } from 'node:crypto';
import AxeBuilder from '@axe-core/playwright';
import type { APIRequestContext, Page } from '@playwright/test';
import { expect, startDemoRunViaApi, test } from '../fixtures/test.ts';

/** Every id the API lists under `input`, page by page through its cursor (the console's own proxy). */
async function allIdsViaApi(request: APIRequestContext, input: Record<string, unknown>): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const q = encodeURIComponent(JSON.stringify({ ...input, limit: 200, ...(cursor ? { cursor } : {}) }));
    const res = await request.get(`/api/trpc/runs.page?input=${q}`);
    expect(res.status()).toBe(200);
    const page = (await res.json()) as { result: { data: { items: { id: string }[]; nextCursor: string | null } } };
    ids.push(...page.result.data.items.map((r) => r.id));
    cursor = page.result.data.nextCursor ?? undefined;
  } while (cursor);
  return ids;
}

/** Clicks "Load more" until the list says it shows everything; returns the row ids in order. */
async function pageToTheEnd(page: Page): Promise<string[]> {
  const end = page.getByTestId('list-end');
  const more = page.getByTestId('load-more');
  while (!(await end.isVisible())) {
    const before = await page.getByTestId('run-row').count();
    await expect(more.or(end)).toBeVisible();
    if (await more.isVisible()) {
      await more.click();
      await expect(page.getByTestId('run-row').nth(before)).toBeAttached();
    }
  }
  return page.getByTestId('run-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id') ?? ''));
}

test('filtered by status and flow, "Load more" pages through every matching run once, reaching runs beyond the first 100', async ({
  page,
  request,
}) => {
  test.setTimeout(180_000);
  // 105 runs of ours, started one after another: the first ones started sit past the 100th row
  // (newest first), which the old console could not reach.
  const mine: string[] = [];
  for (let i = 0; i < 105; i++) mine.push(await startDemoRunViaApi(request, randomUUID()));
  await expect
    .poll(
      async () => {
        const done = new Set(await allIdsViaApi(request, { status: ['Completed'], flowName: 'demo.order' }));
        return mine.filter((id) => !done.has(id)).length;
      },
      { timeout: 60_000 },
    )
    .toBe(0);

  await page.goto('/runs');
  await page.getByTestId('status-filter').selectOption('Completed');
  await expect(page).toHaveURL(/[?&]status=Completed/);
  await page.getByTestId('flow-filter').fill('demo.order');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page).toHaveURL(/[?&]flow=demo\.order/);
  await expect(page.getByTestId('count-Completed')).toContainText(/Completed \d+/);
  // The first page holds 50: 105 runs of ours alone need three. "Load more" shows only once the
  // rows are this filter's own (not the previous filter's, kept on screen while it loads).
  await expect(page.getByTestId('load-more')).toBeVisible();
  await expect(page.getByTestId('run-row')).toHaveCount(50);
  const ids = await pageToTheEnd(page);
  expect(new Set(ids).size).toBe(ids.length);
  for (const id of mine) expect(ids).toContain(id);
  // The first run of ours, started before 104 others, is listed after them: beyond row 100.
  expect(ids.indexOf(mine[0] ?? '')).toBeGreaterThanOrEqual(104);
  await expect(page.locator(`[data-testid="run-row"][data-run-id="${mine[0]}"]`)).toBeVisible();
  await expect(page.getByTestId('run-row').filter({ hasNotText: 'Completed' })).toHaveCount(0);
  const total = Number((await page.getByTestId('count-Completed').textContent())?.replace(/\D/g, ''));
  expect(ids.length).toBe(total);
});

test('search by business key finds the run; the filter is in the URL and a reload keeps it', async ({
  page,
  request,
}) => {
  const key = `order-${randomUUID()}`;
  const runId = await startDemoRunViaApi(request, key);
  await page.goto('/runs?order=stalest');
  await page.getByTestId('runs-search').fill(key);
  await page.getByTestId('runs-search').press('Enter');
  await expect(page).toHaveURL(new RegExp(`[?&]q=${key}`));
  await expect(page).toHaveURL(/[?&]order=stalest/);
  await expect(page.getByTestId('run-row')).toHaveCount(1);
  await expect(page.getByTestId('run-row')).toHaveAttribute('data-run-id', runId);

  await page.reload();
  await expect(page.getByTestId('runs-search')).toHaveValue(key);
  await expect(page.getByTestId('run-row')).toHaveCount(1);
  await expect(page.getByTestId('run-row')).toHaveAttribute('data-run-id', runId);

  // Not updated for a day: the run just started is not among them (the server filters by staleness).
  await page.getByTestId('runs-stalled-filter').selectOption('1440');
  await expect(page).toHaveURL(/[?&]stalled=1440/);
  await expect(page.getByTestId('runs-empty')).toContainText('No runs match this filter');

  // The run id finds it too; ticking it offers the bulk repairs.
  await page.goto(`/runs?q=${runId}`);
  await expect(page.getByTestId('run-row')).toHaveAttribute('data-run-id', runId);
  await page.getByTestId('run-select').check();
  await expect(page.getByTestId('selection-bar')).toContainText('1 run selected');
  await expect(page.getByTestId('bulk-preview')).toHaveText('Preview for 1 run');
});

test.describe('at 390 px wide', () => {
  test.use({ viewport: { width: 390, height: 844 } });
  for (const path of ['/runs', '/instances', '/demo']) {
    test(`${path} does not scroll the page sideways`, async ({ page, request }) => {
      await startDemoRunViaApi(request, `narrow-${randomUUID()}`);
      await page.goto(path);
      await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
      if (path === '/runs') await expect(page.getByTestId('run-row').first()).toBeVisible();
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(width).toBeLessThanOrEqual(390);
    });
  }
});

for (const path of ['/runs', '/instances']) {
  test(`${path} has no serious or critical axe violation`, async ({ page, request }) => {
    await startDemoRunViaApi(request, `axe-${randomUUID()}`);
    await page.goto(path);
    await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
    await expect(page.getByTestId('last-updated').or(page.getByText(/refreshing every 2 s/))).toBeVisible();
    const results = await new AxeBuilder({ page }).analyze();
    const bad = results.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
    expect(bad).toEqual([]);
  });
}

test('a frozen control plane shows the stale banner, which clears when it answers again', async ({ page }) => {
  test.setTimeout(90_000);
  const pgid = Number(process.env.SAGAFLOW_E2E_CONTROL_PGID);
  expect(pgid, 'the global setup exports the control plane group id').toBeGreaterThan(0);
  await page.goto('/runs');
  await expect(page.getByTestId('last-updated')).toContainText('updated');
  await expect(page.getByTestId('stale-banner')).toHaveCount(0);
  process.kill(-pgid, 'SIGSTOP');
  try {
    // Nothing answers and nothing fails fast: the banner comes from the age of the last answer.
    await expect(page.getByTestId('stale-banner')).toBeVisible({ timeout: 20_000 });
    await expect(page.getByTestId('stale-banner')).toContainText('the control plane has not answered since');
  } finally {
    process.kill(-pgid, 'SIGCONT');
  }
  await expect(page.getByTestId('stale-banner')).toHaveCount(0, { timeout: 45_000 });
  await expect(page.getByTestId('run-row').first()).toBeVisible();
});
