import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { createDatabase, startCluster, uniqueDatabaseName, type PgCluster } from '@sagaflow/test-postgres';
import { expectNoSeriousAxeViolation, expectNoSideScroll, saveScreenshot } from '../fixtures/page-checks.ts';
import { startConsoleOnPostgres, startHangingWorker } from '../fixtures/postgres-worker-stack.ts';
import type { ProcessGroup } from '../fixtures/process-group.ts';
import { mutateViaConsole, queryViaConsole } from '../fixtures/sign-in-accounts.ts';
import type { ConsoleStack } from '../fixtures/start-console-stack.ts';
import { expect, test } from '../fixtures/test.ts';

/** Runs whose worker is frozen: each makes two real anomalies, so 30 of them fill more than one page (50). */
const runCount = 30;

interface AnomalyPageCall {
  input: Record<string, unknown>;
  nextCursor: string | null;
  ids: string[];
}

/** Records every anomalies.page call the console makes (its input and what the server answered). */
function recordAnomalyPages(page: Page): AnomalyPageCall[] {
  const calls: AnomalyPageCall[] = [];
  page.on('response', async (res) => {
    const url = new URL(res.url());
    if (!url.pathname.startsWith('/api/trpc/')) return;
    const i = decodeURIComponent(url.pathname.slice('/api/trpc/'.length)).split(',').indexOf('anomalies.page');
    if (i < 0) return;
    const inputs = JSON.parse(url.searchParams.get('input') ?? '{}') as Record<string, Record<string, unknown>>;
    const body = (await res.json().catch(() => null)) as
      { result?: { data?: { nextCursor: string | null; items: { id: string }[] } } }[] | null;
    const data = body?.[i]?.result?.data;
    calls.push({
      input: inputs[String(i)] ?? {},
      nextCursor: data?.nextCursor ?? null,
      ids: data?.items.map((a) => a.id) ?? [],
    });
  });
  return calls;
}

/**
 * Real anomalies, made the way production makes them: a worker (a real process on a real
 * PostgreSQL 15) holds 30 demo.order runs' charge steps and is frozen (SIGSTOP), so its heartbeats
 * stop. A control plane started then redelivers each run's job, whose lease ran out: that replay
 * meets the step still held and journals `claim_lost`, and the monitor finds the owner gone. Each
 * step is reclaimed and its run completes on the control plane. Then the worker is thawed and answers with its
 * late outcomes, each fenced out and journaled `write_refused` (its run has finished): 60 entries.
 */
test.describe('anomalies from a worker that was frozen', () => {
  let cluster: PgCluster | null = null;
  let worker: ProcessGroup | null = null;
  let stack: ConsoleStack | null = null;
  let runIds: string[] = [];
  const releaseDir = mkdtempSync(join(tmpdir(), 'sagaflow-e2e-release-'));

  test.beforeAll(async () => {
    test.setTimeout(480_000);
    cluster = await startCluster();
    const url = await createDatabase(cluster.adminUrl, uniqueDatabaseName('e2e_anomalies'));
    const releaseFile = join(releaseDir, 'release');
    const orderIds = Array.from({ length: runCount }, (_, i) => `late-${i}-${randomUUID()}`);
    const started = await startHangingWorker(url, orderIds, { RELEASE_FILE: releaseFile });
    const frozen = started.worker;
    worker = frozen;
    runIds = started.runIds;
    if (!frozen.pid) throw new Error('the worker did not start');
    process.kill(-frozen.pid, 'SIGSTOP');

    stack = await startConsoleOnPostgres(url);
    const { baseUrl, sessionCookie } = stack;
    const count = async (code: string) =>
      (
        await queryViaConsole<{ items: unknown[] }>(baseUrl, sessionCookie, 'anomalies.page', {
          code,
          limit: 200,
        })
      ).items.length;
    const run = (id: string) =>
      queryViaConsole<{ run: { status: string; stuckReason: string | null } }>(baseUrl, sessionCookie, 'runs.get', {
        id,
      });
    const statuses = async () => Promise.all(runIds.map(async (id) => (await run(id)).run));
    // Every run's replay on the control plane met its step held (claim_lost), and every run is stuck.
    await expect.poll(() => count('claim_lost'), { timeout: 120_000 }).toBe(runCount);
    await expect
      .poll(async () => (await statuses()).filter((r) => r.stuckReason?.startsWith('owner_gone:')).length, {
        timeout: 120_000,
      })
      .toBe(runCount);
    // Each held step is reclaimed (one wake per run: a kick would add its own, and two replays would
    // race for the step, the loser journaling one more claim_lost).
    for (const id of runIds) {
      await mutateViaConsole(baseUrl, sessionCookie, 'repairs.applyOne', {
        kind: 'run.reclaim_step',
        target: { runId: id, stepSequence: 1 },
        expected: { runStatus: (await run(id)).run.status, stepStatus: 'Running', stepAttempts: 1 },
        reason: 'its worker froze',
        idempotencyKey: randomUUID(),
      });
    }
    await expect
      .poll(async () => (await statuses()).filter((r) => r.status === 'Completed').length, { timeout: 180_000 })
      .toBe(runCount);

    // Thawed, the worker finishes the charges it started and answers with them: too late.
    writeFileSync(releaseFile, '');
    process.kill(-frozen.pid, 'SIGCONT');
    await expect.poll(() => count('write_refused'), { timeout: 120_000 }).toBe(runCount);
    expect(await count('claim_lost')).toBe(runCount);
  });
  test.afterAll(async () => {
    await worker?.stop(0);
    await stack?.stop();
    await cluster?.stop();
    rmSync(releaseDir, { recursive: true, force: true });
  });

  const open = async (page: Page, path: string) => {
    if (!stack) throw new Error('no stack');
    await page.context().addCookies([{ name: 'sagaflow_session', value: stack.sessionCookie, url: stack.baseUrl }]);
    await page.goto(`${stack.baseUrl}${path}`);
  };

  test("a run's entries: its lost claim and its refused late outcome, linked to the run and step, filtered by code", async ({
    page,
  }, testInfo) => {
    const runId = runIds[0] ?? '';
    await open(page, `/anomalies?run=${runId}`);
    const entries = page.getByTestId('anomaly-entry');
    await expect(entries).toHaveCount(2);
    for (const code of ['claim_lost', 'write_refused']) {
      const entry = entries.filter({ hasText: code });
      await expect(entry).toHaveCount(1);
      await expect(entry.getByRole('link', { name: runId.slice(0, 8) })).toHaveAttribute('href', `/runs/${runId}`);
      const step = entry.getByRole('link', { name: '#1 demo.charge-card' });
      await expect(step).toHaveAttribute('href', `/runs/${runId}#steps`);
    }
    await saveScreenshot(page, testInfo, 'anomalies-real');
    await expectNoSeriousAxeViolation(page);

    // Its code is a link that filters by it, kept in the URL; the step link opens the run's steps.
    await entries.filter({ hasText: 'write_refused' }).getByRole('link', { name: 'write_refused' }).click();
    await expect(page).toHaveURL(new RegExp(`/anomalies\\?code=write_refused&run=${runId}$`));
    await expect(entries).toHaveCount(1);
    await entries.getByRole('link', { name: '#1 demo.charge-card' }).click();
    await expect(page).toHaveURL(new RegExp(`/runs/${runId}#steps$`));
    await expect(page.getByTestId('anomaly-row')).toContainText(['claim_lost', 'write_refused']);
  });

  test('Load more follows the server cursor past the first 50 to all 60; a code filter is what the API is asked', async ({
    page,
  }, testInfo) => {
    const calls = recordAnomalyPages(page);
    await open(page, '/anomalies');
    const rows = page.getByTestId('anomaly-entry');
    await expect(rows).toHaveCount(50);
    const firstPage = () => calls.find((c) => !c.input.cursor && c.ids.length === 50);
    await expect.poll(() => firstPage()?.nextCursor).toBeTruthy();
    const first = firstPage();
    await page.getByTestId('load-more').click();
    await expect(rows).toHaveCount(2 * runCount);
    await expect(page.getByTestId('list-end')).toContainText(`All ${2 * runCount} matching anomalies shown`);
    // The second page was asked from the first page's cursor, and holds the other entries.
    await expect.poll(() => calls.find((c) => c.input.cursor !== undefined)?.input.cursor).toBe(first?.nextCursor);
    const second = calls.find((c) => c.input.cursor !== undefined);
    expect(new Set([...(first?.ids ?? []), ...(second?.ids ?? [])]).size).toBe(2 * runCount);
    // Every entry is one of the frozen worker's runs: two each.
    for (const runId of runIds)
      await expect(rows.filter({ has: page.locator(`a[href="/runs/${runId}"]`) })).toHaveCount(2);
    await saveScreenshot(page, testInfo, 'anomalies');
    await expectNoSeriousAxeViolation(page);

    // A code is a link that filters by it; the filter is what the API is asked.
    await rows.filter({ hasText: 'claim_lost' }).first().getByRole('link', { name: 'claim_lost' }).click();
    await expect(page).toHaveURL(/\/anomalies\?code=claim_lost$/);
    await expect(rows).toHaveCount(runCount);
    await expect(page.getByTestId('list-end')).toContainText(`All ${runCount} matching anomalies shown`);
    await expect.poll(() => calls.at(-1)?.input).toMatchObject({ code: 'claim_lost', limit: 50 });

    // A run filter that is no run id is said on the page, not sent.
    const asked = calls.length;
    await open(page, '/anomalies?run=not-a-run');
    await expect(page.getByRole('alert').filter({ hasText: 'is not a run id' })).toBeVisible();
    expect(calls.slice(asked).map((c) => c.input)).not.toContainEqual(
      expect.objectContaining({ runId: expect.anything() }),
    );
  });

  test.describe('at 390 px wide', () => {
    test.use({ viewport: { width: 390, height: 844 } });
    test('the anomaly log does not scroll sideways', async ({ page }, testInfo) => {
      await open(page, '/anomalies');
      await expect(page.getByTestId('anomaly-entry')).toHaveCount(50);
      await expectNoSideScroll(page);
      await saveScreenshot(page, testInfo, 'anomalies-390');
    });
  });
});
