import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { holdRuns, waitForWaiters, type HeldRows } from '../../support/held-rows.ts';
import { parkedWaiters } from '../../support/parked-waiters.ts';
import { seedOpenChildren } from '../../support/seed-open-children.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * Review 66, HELD: a terminate racing the monitor's expiry of the same parent (ADR 0136: the expiry locks the
 * parent, then asks its tree in one statement; ADR 0125/0089: the terminate locks the tree deepest first and the
 * parent last). Real PostgreSQL, three sessions.
 *
 * P (overdue) → C → G. A session of the test holds P's row. The expiry sweep queues on P first, then the
 * terminate (which has locked G and C) queues on P too. The test's session lets go: the expiry takes P and its
 * one statement waits for C, which the terminate holds while it waits for P: a lock cycle, which PostgreSQL
 * breaks by rolling one of them back. Whichever it is, the outcome holds: the terminate answers
 * `{ terminated: true }`, P, C and G end `Terminated` with one `run.terminated` each, and nothing says the
 * expiry failed (no `expiry_failed`, no stuck reason).
 */
describe('held: a terminate racing the expiry of the same parent ends the tree once (postgres)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let held: HeldRows | undefined;
  beforeEach(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({
      db,
      flows: [waiter],
      actions,
      // The expiry waits for rows longer than PostgreSQL's deadlock check (1 s), so the cycle is what ends it.
      config: { sweeps: { held_run_wait_ms: 5000 } },
    });
  });
  afterEach(async () => {
    await held?.rollback().catch(() => undefined);
    await t?.close();
    await db?.close();
  });

  it('the expiry queued first, the terminate second, on a held parent', async () => {
    const [p] = await parkedWaiters(t, [60]);
    await seedOpenChildren(db, p!, 1);
    const c = (await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: p! } })).id;
    await seedOpenChildren(db, c, 1);
    const g = (await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: c } })).id;
    t.clock.advance(61_000);

    held = await holdRuns(db.url!, [p!]);
    const sweep = t.engine.sweepExpiredRuns();
    await waitForWaiters(db, held.pid, 1);
    const terminate = t.engine.terminate(p!, { reason: 'stopped by ops' });
    // The terminate queues behind the expiry (it waits for the expiry's tuple lock, not for the holder).
    await waitFor('the terminate to wait on P too', async () => {
      const [row] = await db.prisma.$queryRaw<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock'`;
      return (row?.n ?? 0) >= 2 ? true : undefined;
    });
    await held.rollback();
    held = undefined;
    const [swept, terminated] = await Promise.all([sweep, terminate]);

    const runs = await db.prisma.flowRun.findMany({
      where: { id: { in: [p!, c, g] } },
      select: { id: true, status: true, stuck_reason: true },
    });
    const name = new Map<string, string>([
      [p!, 'P'],
      [c, 'C'],
      [g, 'G'],
    ]);
    const ends = await db.prisma.flowEvent.groupBy({
      by: ['run_id'],
      where: { run_id: { in: [p!, c, g] }, type: 'run.terminated' },
      _count: { _all: true },
    });
    const anomalies = await db.prisma.anomalyLog.findMany({
      where: { run_id: p!, code: 'expiry_failed' },
      select: { message: true },
    });
    expect({
      terminated,
      expiredOrPassedOver: swept.expired.length <= 1,
      statuses: Object.fromEntries(runs.map((r): [string, string] => [name.get(r.id)!, r.status])),
      stuck: runs.filter((r) => r.stuck_reason !== null).map((r) => name.get(r.id)),
      ends: Object.fromEntries(ends.map((e): [string, number] => [name.get(e.run_id)!, e._count._all])),
      expiryFailed: anomalies.map((a) => a.message),
    }).toEqual({
      terminated: { terminated: true },
      expiredOrPassedOver: true,
      statuses: { P: 'Terminated', C: 'Terminated', G: 'Terminated' },
      stuck: [],
      ends: { P: 1, C: 1, G: 1 },
      expiryFailed: [],
    });
  }, 30_000);
});
