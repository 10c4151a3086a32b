import { randomUUID } from 'node:crypto';
import type { Page } from '@playwright/test';
import { createDatabase, startCluster, uniqueDatabaseName, type PgCluster } from '@sagaflow/test-postgres';
import { expectNoSeriousAxeViolation, saveScreenshot } from '../fixtures/page-checks.ts';
import { startConsoleOnPostgres, startStuckFestivalWorker } from '../fixtures/postgres-worker-stack.ts';
import type { ProcessGroup } from '../fixtures/process-group.ts';
import { mutateViaConsole, queryViaConsole } from '../fixtures/sign-in-accounts.ts';
import type { ConsoleStack } from '../fixtures/start-console-stack.ts';
import { expect, test } from '../fixtures/test.ts';

interface RunAnswer {
  run: {
    status: string;
    stuckReason: string | null;
    waitingFor: string | null;
    expiresAt: string | null;
    runTimeoutAt: string | null;
  };
  events: { type: string; data: unknown }[];
  anomalies: { code: string; sequence: number | null }[];
}

const pad = (n: number) => String(n).padStart(2, '0');
/** The wall-clock time the console shows for an instant (the browser runs in this machine's zone). */
const clockOf = (iso: string) => {
  const d = new Date(iso);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
};

/**
 * Every run state the console shows, produced for real on one control plane over a real PostgreSQL
 * 15 (issue 10):
 * - stuck: a worker process runs a demo.festival-order (a charge, a recorded value, a ticket child
 *   run, then a parallel block) and is SIGKILLed while the block's reserve-stock step is Running
 *   under it, its sibling done (reclaim off). The control plane started next redelivers the run's
 *   job: its replay meets the step still held (claim_lost, journaled on step 5) and the monitor
 *   finds the owner gone;
 * - waiting: a festival order started on the control plane waits for its ticket child, which waits
 *   for the box office; an operator cancels the ticket, and its cleanup waits (signal `released`)
 *   inside the cancellation's cleanup window. Runs get a 10 min business deadline and a 1 h run
 *   timeout from the engine's defaults (a child run gets none of its own: its parent's bound it).
 */
test.describe('run states made for real', () => {
  let cluster: PgCluster | null = null;
  let worker: ProcessGroup | null = null;
  let stack: ConsoleStack | null = null;
  const ids = { stuck: '', issuedTicket: '', waitingOrder: '', cancelledTicket: '' };

  test.beforeAll(async () => {
    test.setTimeout(300_000);
    cluster = await startCluster();
    const url = await createDatabase(cluster.adminUrl, uniqueDatabaseName('e2e_run_states'));
    const started = await startStuckFestivalWorker(url, `stuck-${randomUUID()}`);
    worker = started.worker;
    ids.stuck = started.runId;
    ids.issuedTicket = started.childId;
    if (started.worker.pid) process.kill(-started.worker.pid, 'SIGKILL');
    expect(await started.worker.exited).toBe('SIGKILL');

    stack = await startConsoleOnPostgres(url, {
      monitor: { expiration: { defaults: { run: 600 } } },
      runs: { default_timeout_seconds: 3600 },
    });
    const { baseUrl, sessionCookie } = stack;
    const get = (id: string) => queryViaConsole<RunAnswer>(baseUrl, sessionCookie, 'runs.get', { id });
    await expect
      .poll(
        async () => {
          const d = await get(ids.stuck);
          return `${d.run.stuckReason?.split(':')[0]} ${d.anomalies.map((a) => `${a.code}@${a.sequence}`).join()}`;
        },
        { timeout: 120_000 },
      )
      .toBe('owner_gone claim_lost@5');

    const orderId = `waiting-${randomUUID()}`;
    const answer = (await mutateViaConsole(baseUrl, sessionCookie, 'runs.start', {
      flowName: 'demo.festival-order',
      input: { orderId, amount: 80 },
      businessKey: orderId,
    })) as { result: { data: { runId: string } } };
    ids.waitingOrder = answer.result.data.runId;
    const childOf = async (id: string) =>
      ((await get(id)).events.find((e) => e.type === 'child.started')?.data as { child?: string } | undefined)?.child;
    await expect.poll(() => childOf(ids.waitingOrder), { timeout: 60_000 }).toBeTruthy();
    ids.cancelledTicket = (await childOf(ids.waitingOrder)) ?? '';
    const waitingFor = async () => (await get(ids.cancelledTicket)).run.waitingFor ?? '';
    await expect.poll(waitingFor, { timeout: 60_000 }).toMatch(/^signal "issued" until /);
    const cancel = (await mutateViaConsole(baseUrl, sessionCookie, 'repairs.applyOne', {
      kind: 'run.cancel',
      target: { runId: ids.cancelledTicket },
      expected: { runStatus: 'Waiting' },
      reason: 'customer called to cancel',
      idempotencyKey: randomUUID(),
    })) as { result: { data: { status?: string } } };
    expect(cancel.result.data.status).toBe('applied');
    await expect.poll(waitingFor, { timeout: 60_000 }).toMatch(/^signal "released" until /);
  });
  test.afterAll(async () => {
    await worker?.stop(0);
    await stack?.stop();
    await cluster?.stop();
  });

  const open = async (page: Page, path: string) => {
    if (!stack) throw new Error('no stack');
    await page.context().addCookies([{ name: 'sagaflow_session', value: stack.sessionCookie, url: stack.baseUrl }]);
    await page.goto(`${stack.baseUrl}${path}`);
  };
  const runOf = (id: string) => {
    if (!stack) throw new Error('no stack');
    return queryViaConsole<RunAnswer>(stack.baseUrl, stack.sessionCookie, 'runs.get', { id });
  };

  test('a stuck run leads with its reason verbatim, what to do about it, and a way to its anomalies', async ({
    page,
  }, testInfo) => {
    const reason = (await runOf(ids.stuck)).run.stuckReason ?? '';
    expect(reason).toMatch(/^owner_gone: step 5 \(demo\.reserve-stock\) held by worker /);
    await open(page, `/runs/${ids.stuck}`);

    const banner = page.getByTestId('stuck-banner');
    await expect(banner.getByTestId('stuck-reason')).toHaveText(reason);
    await expect(banner.getByTestId('stuck-hint')).toContainText('reclaim the step (or kick the run)');
    // When it became stuck and why, from its run.stuck event; the anomaly sits on the step it happened to.
    await expect(page.getByTestId('stuck-period')).toContainText(reason);
    await expect(page.getByTestId('stuck-period')).toContainText('still stuck');
    const step5 = page.locator('[data-testid="timeline-step"][data-sequence="5"]');
    await expect(step5.getByTestId('timeline-anomaly')).toHaveAttribute('data-code', 'claim_lost');
    await expect(page.getByTestId('timeline-parallel')).toContainText('2 steps side by side');
    await saveScreenshot(page, testInfo, 'run-stuck');
    await expectNoSeriousAxeViolation(page);
    await banner.getByRole('link', { name: /1 anomaly/ }).click();
    await expect(page).toHaveURL(/#anomalies$/);
    await expect(page.getByTestId('anomaly-row')).toContainText(['claim_lost']);
  });

  test('recorded values stay hidden until asked for; parallel steps and child runs are marked', async ({
    page,
  }, testInfo) => {
    await open(page, `/runs/${ids.stuck}`);

    const rows = page.getByTestId('step-row');
    await expect(rows).toHaveCount(4);
    await page.getByTestId('show-values').getByRole('checkbox').check();
    await expect(rows).toHaveCount(5);
    await expect(page.locator('[data-step-kind="value"]')).toContainText('now');
    await expect(page.getByTestId('parallel-block')).toHaveText(/steps 4–5/);
    const child = page.getByTestId('child-run-link');
    await expect(child).toHaveAttribute('href', `/runs/${ids.issuedTicket}`);
    await saveScreenshot(page, testInfo, 'run-steps-with-values');

    // The child run it links to was issued and completed, and links back to its parent.
    await child.click();
    await expect(page).toHaveURL(new RegExp(`/runs/${ids.issuedTicket}$`));
    await expect(page.getByTestId('run-status')).toHaveText('Completed');
    await expect(page.getByTestId('parent-run-link')).toHaveAttribute('href', `/runs/${ids.stuck}`);
    await saveScreenshot(page, testInfo, 'run-child-completed');
  });

  test('a waiting run says what it waits for and until when, its cancel request, parent and deadlines', async ({
    page,
  }, testInfo) => {
    const ticket = await runOf(ids.cancelledTicket);
    const until = /^signal "released" until (\S+)$/.exec(ticket.run.waitingFor ?? '')?.[1] ?? '';
    expect(until).not.toBe('');
    await open(page, `/runs/${ids.cancelledTicket}`);

    await expect(page.getByTestId('waiting-for')).toHaveText(
      new RegExp(
        // With its zone (review 42): "UTC" or "UTC+05:30", the browser's offset at that instant.
        `^Waiting for signal "released" until (\\d{4}-\\d\\d-\\d\\d )?${clockOf(until)} UTC([+-]\\d\\d:\\d\\d)? \\(in (\\d+ min )?\\d+(\\.\\d)? s\\)$`,
      ),
    );
    await expect(page.getByTestId('cancel-requested')).toContainText('customer called to cancel');
    await expect(page.getByTestId('parent-run-link')).toHaveAttribute('href', `/runs/${ids.waitingOrder}`);
    const waitingSignal = page.locator('[data-step-kind="signal"]').filter({ hasText: 'released' });
    await expect(waitingSignal.getByTestId('step-wake-at')).toContainText('gives up');
    await expect(page.getByTestId('stuck-banner')).toHaveCount(0);
    await saveScreenshot(page, testInfo, 'run-waiting-cancel-requested');

    // Its parent waits for it, under the business deadline and run timeout the engine gave it.
    const order = await runOf(ids.waitingOrder);
    const expiresAt = order.run.expiresAt ?? '';
    const minutesLeft = Math.floor((Date.parse(expiresAt) - Date.now()) / 60_000);
    expect(minutesLeft).toBeGreaterThanOrEqual(1);
    await page.getByTestId('parent-run-link').click();
    await expect(page.getByTestId('waiting-for')).toContainText(`child run ${ids.cancelledTicket.slice(0, 8)}`);
    await expect(page.getByTestId('run-expires-at')).toContainText(clockOf(expiresAt));
    await expect(page.getByTestId('run-expires-at')).toContainText(
      new RegExp(`in (${minutesLeft}|${minutesLeft - 1}) min`),
    );
    await expect(page.getByTestId('run-timeout-at')).toContainText(clockOf(order.run.runTimeoutAt ?? ''));
    await expect(page.getByTestId('stuck-banner')).toHaveCount(0);
    await saveScreenshot(page, testInfo, 'run-waiting-parent-deadlines');
  });

  test('"Stuck only" asks the server for the runs with a stuck reason and shows what it answers', async ({
    page,
  }, testInfo) => {
    const reason = (await runOf(ids.stuck)).run.stuckReason ?? '';
    await open(page, '/runs');
    await expect(page.getByTestId('run-row')).toHaveCount(4);

    const asked = page.waitForResponse((res) => {
      const url = new URL(res.url());
      return url.pathname.includes('runs.page') && (url.searchParams.get('input') ?? '').includes('"stuckOnly":true');
    });
    await page.getByTestId('stuck-only').check();
    await expect(page).toHaveURL(/[?&]stuck=1/);
    // The server answered the filter: one run, the stuck one.
    const answer = await asked;
    const paths = decodeURIComponent(new URL(answer.url()).pathname.slice('/api/trpc/'.length)).split(',');
    const body = (await answer.json()) as { result: { data: { items: { id: string }[] } } }[];
    expect(body[paths.indexOf('runs.page')]?.result.data.items.map((r) => r.id)).toEqual([ids.stuck]);
    await expect(page.getByTestId('run-row')).toHaveCount(1);
    await expect(page.getByTestId('run-row')).toContainText(reason.slice(0, 40));
    await expect(page.getByTestId('list-end')).toHaveText('All 1 matching runs shown.');
    await saveScreenshot(page, testInfo, 'runs-stuck-only');
  });

  // Last: it ends the stuck run the tests above read (the file's tests run in order, in one worker).
  test('terminating the stuck run names the step in flight and the completed steps it leaves undone (ADR 0091)', async ({
    page,
  }, testInfo) => {
    if (!stack) throw new Error('no stack');
    // This stack has one account, its admin: terminate applies at once instead of waiting for a second operator.
    await mutateViaConsole(stack.baseUrl, stack.sessionCookie, 'approvalPolicy.set', {
      gatedCommands: [],
      bulkThreshold: null,
    });
    await open(page, `/runs/${ids.stuck}`);
    await page.getByTestId('repair-run.terminate').click();
    const draft = page.getByTestId('repair-draft');
    const preview = draft.getByTestId('repair-preview');
    await expect(preview).toContainText('left undone: step 1 (demo.charge-card) completed and is not compensated');
    await expect(preview).toContainText('left undone: step 4 (demo.pack-merch) completed and is not compensated');
    await expect(preview).toContainText('in flight: step 5 (demo.reserve-stock) is running on a worker');
    await draft.getByTestId('repair-reason').fill('the stock service lost the reservation; handled by hand');
    await draft.getByTestId('repair-apply').click();
    await expect(draft.getByTestId('repair-applied')).toBeVisible();

    await expect(page.getByTestId('run-status')).toHaveText('Terminated');
    const panel = page.getByTestId('left-undone');
    await expect(panel.getByTestId('left-undone-in-flight')).toHaveText([
      'Step 5 demo.reserve-stock was running on a worker.',
    ]);
    await expect(panel.getByTestId('left-undone-step')).toHaveText([
      'Step 1 demo.charge-card completed; its compensation, if it has one, never ran.',
      'Step 4 demo.pack-merch completed; its compensation, if it has one, never ran.',
    ]);
    // The step's row stays Running as its worker left it; the page says the run ended under it, and
    // stops its clock at the run's end.
    const step5 = page.locator('[data-testid="step-row"][data-step-name="demo.reserve-stock"]');
    await expect(step5.getByTestId('step-status')).toHaveText('Running');
    await expect(step5.getByTestId('step-in-flight')).toHaveText('run ended: outcome unknown');
    await expect(page.locator('[data-testid="step-row"] [data-testid="step-in-flight"]')).toHaveCount(1);
    const timeline5 = page.locator('[data-testid="timeline-step"][data-sequence="5"]');
    await expect(timeline5.getByTestId('step-in-flight')).toBeVisible();
    const ended = (await runOf(ids.stuck)).events.find((e) => e.type === 'run.terminated');
    expect(ended?.data).toMatchObject({
      left_undone: { source: 'record', in_flight: [{ kind: 'action', sequence: 5, name: 'demo.reserve-stock' }] },
    });
    await saveScreenshot(page, testInfo, 'run-terminated-left-undone');
    await expectNoSeriousAxeViolation(page);
  });
});
