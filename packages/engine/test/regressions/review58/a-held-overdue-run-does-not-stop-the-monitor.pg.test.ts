import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * Review 58 (seed 000 "Monitor: sweeps overdue steps/runs to Expired"; ADR 0131: a row another session
 * holds is given up, not waited for). The monitor's step sweep skips rows another session holds (`for
 * update … skip locked`). Its run sweep expires each overdue run in a plain `prisma.$transaction` whose
 * first statement locks the run (`lockOpenRun(tx, runId, 'no key update')`), with no `lock_timeout` and
 * no `statement_timeout`. Attacked: one overdue run held by another session (an operator's psql, a
 * host's open transaction), the stalest of two. Does the monitor pass give it up and expire the other,
 * or does the whole pass (and with it every replica's monitor, which all meet the same run first) wait
 * for as long as the row is held?
 */
const BOUND_MS = 8_000;

describe('review 58: the monitor with one overdue run held by another session (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let held: HeldRows | undefined;
  const pending: Promise<unknown>[] = [];
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({
      db,
      flows: [waiter],
      actions,
      config: { processes: { transaction_timeout_ms: 1_000 } },
    });
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    await Promise.allSettled(pending);
    await t?.close();
    await db?.close();
  });

  it('a monitor pass gives up the held overdue run and expires the other one', async () => {
    const { engine, clock } = t;
    const first = await engine.startFlow(waiter, null, { expiresInSeconds: 60 });
    await t.drive(first.runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    const second = await engine.startFlow(waiter, null, { expiresInSeconds: 120 });
    await t.drive(second.runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    await engine.stopWorkers();
    // Both deadlines pass (the signal waits are an hour long).
    clock.advance(300_000);
    held = await holdRuns(db.url!, [first.runId]);

    const pass = engine.monitorPass({ doctor: false });
    pending.push(pass.catch(() => undefined));
    const settled = await Promise.race([
      pass.then(
        (p) => `answered: ${JSON.stringify(p).slice(0, 300)}`,
        (e: unknown) => `threw ${(e as { code?: string }).code ?? ''} ${String((e as Error).message).slice(0, 200)}`,
      ),
      new Promise<string>((res) => setTimeout(() => res('still waiting'), BOUND_MS)),
    ]);
    const waiting = await db.prisma.$queryRaw<{ query: string }[]>`
      select query from pg_stat_activity
       where datname = current_database() and wait_event_type = 'Lock' and ${held.pid}::int = any(pg_blocking_pids(pid))`;
    const secondExpired =
      (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: second.runId } })).expired_at !== null;
    // The control: once the row is let go, a pass expires both (nothing but the lock kept the second).
    await held.rollback();
    held = undefined;
    const heldPass = await pass.then(
      () => 'then answered',
      (e: unknown) => `then threw ${(e as { code?: string }).code ?? ''}`,
    );
    await engine.monitorPass({ doctor: false });
    const afterLetGo = await db.prisma.flowRun.findMany({
      where: { id: { in: [first.runId, second.runId] } },
      select: { id: true, expired_at: true },
    });
    expect(afterLetGo.map((r) => r.expired_at !== null)).toEqual([true, true]);
    expect(
      { pass: settled === 'still waiting' ? 'still waiting' : 'settled', secondExpired },
      `the pass ${settled} after ${BOUND_MS} ms (once let go it ${heldPass}); waiting on the held run: ${JSON.stringify(waiting.map((w) => w.query.replace(/\s+/g, ' ').slice(0, 160)))}`,
    ).toEqual({ pass: 'settled', secondExpired: true });
  }, 60_000);
});
