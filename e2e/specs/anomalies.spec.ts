import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import type { AppRouter } from '@sagaflow/control';
import { createDatabase, startCluster, uniqueDatabaseName, type PgCluster } from '@sagaflow/test-postgres';
import { expectNoSeriousAxeViolation, expectNoSideScroll, saveScreenshot } from '../fixtures/page-checks.ts';
import { startConsoleOnPostgres, startHangingWorker } from '../fixtures/postgres-worker-stack.ts';
import type { ProcessGroup } from '../fixtures/process-group.ts';
import { mutateViaConsole, queryViaConsole } from '../fixtures/sign-in-accounts.ts';
import type { ConsoleStack } from '../fixtures/start-console-stack.ts';
import { expect, test } from '../fixtures/test.ts';

type AnomaliesPage = AppRouter['anomalies']['page']['_def']['$types']['output'];

/**
 * Paging through 60 entries needs more anomalies than one real race makes (the test above the
 * paging one journals a real one), so these answers replace only anomalies.page in the console's
 * batched calls; every other call (the session, the run pages) still reaches the real control plane.
 */
async function fakeAnomalies(page: Page, answer: (input: Record<string, unknown>) => AnomaliesPage) {
  await page.route('**/api/trpc/**', async (route) => {
    const url = new URL(route.request().url());
    const paths = decodeURIComponent(url.pathname.replace(/^\/api\/trpc\//, '')).split(',');
    if (!paths.includes('anomalies.page')) return route.continue();
    let response;
    let body: unknown[];
    try {
      response = await route.fetch();
      body = (await response.json()) as unknown[];
    } catch {
      // The page moved on while this call was in flight: nobody reads its answer.
      return route.abort().catch(() => undefined);
    }
    const inputs = JSON.parse(url.searchParams.get('input') ?? '{}') as Record<string, Record<string, unknown>>;
    paths.forEach((p, i) => {
      if (p === 'anomalies.page') body[i] = { result: { data: answer(inputs[String(i)] ?? {}) } };
    });
    await route.fulfill({ response, json: body });
  });
}

const runId = randomUUID();
const entries: AnomaliesPage['items'] = Array.from({ length: 60 }, (_, i) => ({
  id: String(1000 - i),
  code: i % 2 === 0 ? 'claim_lost' : 'outcome_rejected',
  runId: i < 3 ? runId : null,
  rowId: null,
  sequence: i < 3 ? 2 : null,
  name: i < 3 ? 'charge-card' : null,
  site: null,
  message: `anomaly ${i}`,
  details: {},
  at: new Date(Date.parse('2026-11-30T10:00:00Z') - i * 60_000).toISOString(),
}));

/**
 * A real anomaly, made the way production makes one: a worker (a real process on a real PostgreSQL
 * 15) holds a run's charge step and is frozen (SIGSTOP), so its heartbeats stop; the control plane
 * finds the step's owner gone, a kick runs it again there and the run completes. Then the worker is
 * thawed and answers with its late outcome, which is fenced out and journaled (write_refused: its run has finished).
 * The anomaly log lists it, linked to its run and step, and filters by its code in the URL.
 */
test.describe('a late outcome from a worker that was frozen', () => {
  let cluster: PgCluster | null = null;
  let worker: ProcessGroup | null = null;
  let stack: ConsoleStack | null = null;
  const releaseDir = mkdtempSync(join(tmpdir(), 'sagaflow-e2e-release-'));
  test.afterAll(async () => {
    await worker?.stop(0);
    await stack?.stop();
    await cluster?.stop();
    rmSync(releaseDir, { recursive: true, force: true });
  });

  test('is journaled: the anomaly log lists it with its code, its run and its step, and filters by the code', async ({
    page,
  }, testInfo) => {
    test.setTimeout(240_000);
    cluster = await startCluster();
    const url = await createDatabase(cluster.adminUrl, uniqueDatabaseName('e2e_anomalies'));
    const releaseFile = join(releaseDir, 'release');
    const orderId = `late-${randomUUID()}`;
    const started = await startHangingWorker(url, [orderId], { RELEASE_FILE: releaseFile });
    const frozen = started.worker;
    worker = frozen;
    const runId = started.runIds[0] ?? '';
    if (!frozen.pid) throw new Error('the worker did not start');
    process.kill(-frozen.pid, 'SIGSTOP');

    stack = await startConsoleOnPostgres(url);
    const { baseUrl, sessionCookie } = stack;
    const run = () =>
      queryViaConsole<{ run: { status: string; stuckReason: string | null } }>(baseUrl, sessionCookie, 'runs.get', {
        id: runId,
      });
    await expect.poll(async () => (await run()).run.stuckReason ?? '', { timeout: 60_000 }).toMatch(/^owner_gone:/);
    await mutateViaConsole(baseUrl, sessionCookie, 'repairs.applyOne', {
      kind: 'run.kick',
      target: { runId },
      expected: { runStatus: 'Running' },
      reason: 'its worker froze',
      idempotencyKey: randomUUID(),
    });
    await expect.poll(async () => (await run()).run.status, { timeout: 60_000 }).toBe('Completed');

    // Thawed, the worker finishes the charge it started and answers with it: too late.
    writeFileSync(releaseFile, '');
    process.kill(-frozen.pid, 'SIGCONT');
    await expect.poll(() => frozen.output().includes(`charged ${orderId}`), { timeout: 60_000 }).toBe(true);

    await page.context().addCookies([{ name: 'sagaflow_session', value: sessionCookie, url: baseUrl }]);
    await page.goto(`${baseUrl}/anomalies`);
    const entry = page.getByTestId('anomaly-entry').filter({ hasText: 'write_refused' });
    await expect(entry).toHaveCount(1, { timeout: 30_000 });
    await expect(entry.getByRole('link', { name: runId.slice(0, 8) })).toHaveAttribute('href', `/runs/${runId}`);
    const step = entry.getByRole('link', { name: '#1 demo.charge-card' });
    await expect(step).toHaveAttribute('href', `/runs/${runId}#steps`);
    await saveScreenshot(page, testInfo, 'anomalies-real');
    await expectNoSeriousAxeViolation(page);

    // Its code is a link that filters by it, kept in the URL; the step link opens the run's steps.
    await entry.getByRole('link', { name: 'write_refused' }).click();
    await expect(page).toHaveURL(/\/anomalies\?code=write_refused$/);
    await expect(page.getByTestId('anomaly-entry')).toHaveCount(1);
    await page.getByTestId('anomaly-entry').getByRole('link', { name: '#1 demo.charge-card' }).click();
    await expect(page).toHaveURL(new RegExp(`/runs/${runId}#steps$`));
    await expect(page.getByTestId('anomaly-row')).toContainText(['write_refused']);
  });
});

test('the anomaly log on a real stack: a filter that matches nothing says so, kept in the URL', async ({
  page,
}, testInfo) => {
  await page.goto('/anomalies');
  await expect(page.getByRole('heading', { level: 1, name: 'Anomaly log' })).toBeVisible();
  await expect(page.getByTestId('last-updated')).toContainText('updated');
  await page.getByTestId('filter-code').selectOption('replan_failed');
  await page.getByTestId('filter-since').selectOption('1h');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page).toHaveURL(/\/anomalies\?code=replan_failed&since=1h$/);
  await expect(page.getByTestId('anomalies-empty')).toContainText('No anomaly matches this filter');
  await saveScreenshot(page, testInfo, 'anomalies-empty');
  await page.getByRole('link', { name: 'Show every anomaly' }).click();
  await expect(page).toHaveURL(/\/anomalies$/);
});

test('entries link to their run and step, filters reach the API, and Load more follows the cursor', async ({
  page,
}, testInfo) => {
  const asked: Record<string, unknown>[] = [];
  await fakeAnomalies(page, (input) => {
    asked.push(input);
    const matching = entries.filter((e) => !input.code || e.code === input.code);
    const start = input.cursor ? Number(input.cursor) : 0;
    const items = matching.slice(start, start + 50);
    return { items, nextCursor: start + 50 < matching.length ? String(start + 50) : null };
  });
  await page.goto('/anomalies');
  const rows = page.getByTestId('anomaly-entry');
  await expect(rows).toHaveCount(50);
  await page.getByTestId('load-more').click();
  await expect(rows).toHaveCount(60);
  await expect(page.getByTestId('list-end')).toContainText('All 60 matching anomalies shown');
  await saveScreenshot(page, testInfo, 'anomalies');
  await expectNoSeriousAxeViolation(page);

  // A code is a link that filters by it; the filter is what the API is asked.
  await rows.nth(1).getByRole('link', { name: 'outcome_rejected' }).click();
  await expect(page).toHaveURL(/\/anomalies\?code=outcome_rejected$/);
  await expect(rows).toHaveCount(30);
  expect(asked.at(-1)).toMatchObject({ code: 'outcome_rejected', limit: 50 });

  await page.goto('/anomalies');
  const first = rows.first();
  await expect(first.getByRole('link', { name: '#2 charge-card' })).toHaveAttribute('href', `/runs/${runId}#steps`);
  await expect(first.getByRole('link', { name: runId.slice(0, 8) })).toHaveAttribute('href', `/runs/${runId}`);

  // A run filter that is no run id is said on the page, not sent.
  await page.goto('/anomalies?run=not-a-run');
  await expect(page.getByRole('alert').filter({ hasText: 'is not a run id' })).toBeVisible();
  expect(asked.at(-1)).not.toHaveProperty('runId');
});

test.describe('at 390 px wide', () => {
  test.use({ viewport: { width: 390, height: 844 } });
  test('the anomaly log does not scroll sideways', async ({ page }) => {
    await fakeAnomalies(page, () => ({ items: entries.slice(0, 10), nextCursor: null }));
    await page.goto('/anomalies');
    await expect(page.getByTestId('anomaly-entry').first()).toBeVisible();
    await expectNoSideScroll(page);
  });
});
