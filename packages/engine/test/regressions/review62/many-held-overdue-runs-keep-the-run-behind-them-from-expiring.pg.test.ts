import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { capturingLogger } from '../../support/capturing-logger.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';
import { parkedWaiters } from './support/overdue-runs.ts';

/**
 * Review 62 (ADR 0135: a sweep waits for held runs within `sweeps.held_run_wait_ms`, then 100 ms per further
 * held run, and "the pass's budget (`sweeps.pass_budget_ms`) still stops the expiry sweep's paging"; ADR
 * 0134's consequence: "While another session holds an overdue run, that run is not expired … Every other
 * run's deadline is kept", and its rejected option: "With many held overdue runs at the head of the
 * stalest-first order, each wait used the pass's time budget, and the runs behind them would never be
 * reached").
 *
 * Attacked: 46 overdue runs (a parked waiter and 45 copies of it) held for good by one other session (an
 * operator's `select … for update` over a flow's runs left open, a host's long transaction), at the head of
 * the stalest-first order, and one free overdue run behind them; settings out of the box (allowance 1 s, pass budget 5 s). Each pass starts
 * again from the stalest deadline. Is the free run expired?
 */
const HELD = 45;

describe('review 62: many held overdue runs ahead of a free one (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let held: HeldRows | undefined;
  const capture = capturingLogger();
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({ db, flows: [waiter], actions, logger: capture.logger });
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    await t?.close();
    await db?.close();
  });

  it('the free overdue run behind them is expired', async () => {
    const [template, free] = await parkedWaiters(t, [600, 900]);
    // The held ones: copies of a parked waiter (its row and its steps), with earlier deadlines.
    const copies = await db.prisma.$queryRaw<{ id: string }[]>`
      insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, expires_at, started_at)
      select r.flow_name, r.flow_version, r.status, r.input, r.expires_at - make_interval(secs => g), r.started_at
        from "sagaflow"."flow_runs" r, generate_series(1, ${HELD}::int) g
       where r.id = ${template!}::uuid
      returning id::text as id`;
    await db.prisma.$executeRaw`
      insert into "sagaflow"."action_runs" (run_id, sequence, kind, name, status, input, output, attempts, max_attempts, wake_at, started_at, finished_at)
      select c.id, s.sequence, s.kind, s.name, s.status, s.input, s.output, s.attempts, s.max_attempts, s.wake_at, s.started_at, s.finished_at
        from "sagaflow"."action_runs" s, unnest(${copies.map((c) => c.id)}::uuid[]) c(id)
       where s.run_id = ${template!}::uuid`;
    held = await holdRuns(db.url!, [template!, ...copies.map((c) => c.id)]);
    t.clock.advance(3_600_000);

    const passes = [];
    for (let pass = 1; pass <= 2; pass++) {
      const before = capture.lines.length;
      const started = performance.now();
      const p = await t.engine.sweepExpiredRuns();
      passes.push({
        expired: p.expired.length,
        tookMs: Math.round(performance.now() - started),
        heldRunsPassedOver: capture.lines.slice(before).filter((l) => String(l.msg).startsWith('expiry: run ')).length,
      });
    }
    const freeExpired = (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: free! } })).expired_at !== null;
    // Control: once the rows are let go, one pass reaches and expires the free run.
    await held.rollback();
    held = undefined;
    const control = await t.engine.sweepExpiredRuns();
    expect(
      { freeExpired },
      JSON.stringify({ held: HELD + 1, passes, controlPassExpiredFree: control.expired.includes(free!) }),
    ).toEqual({ freeExpired: true });
  }, 90_000);
});
