import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';
import { parkedWaiters } from '../../support/parked-waiters.ts';
import { seedOpenChildren } from '../../support/seed-open-children.ts';

/** What the tree under `parentId` says about its cancellation: requests, reasons, events and wakes, counted. */
async function treeAfter(db: Database, parentId: string) {
  const [row] = await db.prisma.$queryRaw<
    {
      children: number;
      requested: number;
      reasons: string[];
      events: number;
      wakes: number;
      grandchild_reason: string | null;
    }[]
  >`
    with kids as (select * from "sagaflow"."flow_runs" where parent_run_id = ${parentId}::uuid),
         grand as (select g.* from "sagaflow"."flow_runs" g join kids k on g.parent_run_id = k.id)
    select (select count(*)::int from kids) as children,
           (select count(*)::int from kids where cancel_requested_at is not null) as requested,
           (select coalesce(array_agg(distinct cancel_reason), '{}') from kids) as reasons,
           (select count(*)::int from "sagaflow"."flow_events" e join kids k on e.run_id = k.id
             where e.type = 'run.cancel_requested') as events,
           (select count(*)::int from "sagaflow"."jobs" j join kids k on j.run_id = k.id where j.kind = 'wake-run') as wakes,
           (select min(cancel_reason) from grand) as grandchild_reason`;
  return row!;
}

/**
 * ADR 0136. An overdue parent's expiry, and a run's end, request the cancellation of every open
 * 'propagate' child in ONE statement however many there are. A child at a time (five statements each)
 * outlasted the expiry's `sweeps.transaction_timeout_ms` at about 9,000 children (review 62), and a run's
 * end outlasted the run transaction's fixed 5 s at a few thousand: the run could never be expired, or
 * closed, and its children ran on.
 *
 * Before the fix, on PostgreSQL: the expiry of 5,000 children at a 3 s limit failed (`expiry_failed`,
 * the run not expired), and the run timeout's close of a parent of 5,000 children threw Prisma's or
 * the driver's transaction timeout at every try.
 */
describe(`a wide parent's expiry and end cancel its children in one statement (${testDbKind()})`, () => {
  let db: Database;
  let t: TestEngine;
  const width = 5_000;
  // Each test on a database of its own: the wakes one test's cancellations queue (two per child) must not
  // stand before the next test's runs.
  beforeEach(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({
      db,
      flows: [waiter],
      actions,
      config: { sweeps: { transaction_timeout_ms: 3_000 } },
    });
  });
  afterEach(async () => {
    await t?.close();
    await db?.close();
  });

  it(`an overdue parent of ${width} open children is expired in one pass, and every child is asked to cancel once`, async () => {
    const [parent] = await parkedWaiters(t, [60]);
    await seedOpenChildren(db, parent!, width);
    // One child has a child of its own: its reason names the path the cancellation came down.
    const first = await db.prisma.flowRun.findFirstOrThrow({
      where: { parent_run_id: parent! },
      orderBy: { id: 'asc' },
    });
    await seedOpenChildren(db, first.id, 1);
    t.clock.advance(300_000);

    const pass = await t.engine.sweepExpiredRuns();
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: parent! } });
    const deadline = run.expires_at!.toISOString();
    const because = `parent ${parent!} expired: its business deadline passed at ${deadline}`;
    expect({
      expired: pass.expired,
      failed: pass.failed,
      stuckReason: run.stuck_reason,
      tree: await treeAfter(db, parent!),
    }).toEqual({
      expired: [parent],
      failed: [],
      stuckReason: null,
      tree: {
        children: width,
        requested: width,
        reasons: [because],
        events: width,
        wakes: 2 * width,
        grandchild_reason: `parent ${first.id} was cancelled: ${because}`,
      },
    });
  }, 120_000);

  it(`the run timeout closes a parent of ${width} open children, and its end asks each to cancel once`, async () => {
    const [parent] = await parkedWaiters(t, [3600]);
    await seedOpenChildren(db, parent!, width);
    await db.prisma.flowRun.update({
      where: { id: parent! },
      data: { run_timeout_at: new Date(t.clock.now().getTime() - 1000) },
    });

    expect(await executeRun(t.engine.runtime, parent!)).toBe('finished');
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: parent! } });
    const end = await db.prisma.flowEvent.findFirstOrThrow({ where: { run_id: parent!, type: 'run.timedout' } });
    const data = end.data as { children_cancelled?: string[]; children_cancelled_count?: number };
    const listed = data.children_cancelled ?? [];
    const kids = await db.prisma.flowRun.findMany({
      where: { parent_run_id: parent! },
      select: { id: true },
      orderBy: { id: 'asc' },
    });
    expect({
      status: run.status,
      listed: listed.length,
      count: data.children_cancelled_count,
      listedInIdOrder:
        listed.join() ===
        kids
          .slice(0, 1000)
          .map((k) => k.id)
          .join(),
      tree: await treeAfter(db, parent!),
    }).toEqual({
      status: 'TimedOut',
      // The first thousand by id, and their number: not a list of every child in one event.
      listed: 1000,
      count: width,
      listedInIdOrder: true,
      tree: {
        children: width,
        requested: width,
        reasons: [`parent ${parent!} ended TimedOut before this run finished`],
        events: width,
        wakes: 2 * width,
        grandchild_reason: null,
      },
    });
  }, 120_000);
});
