import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { holdRuns, waitForWaiters, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, holding } from '../../repairs/support/repair-fixtures.ts';
import { seedOrphans } from '../review62/support/orphans.ts';

/**
 * Review 63, attacking ADR 0135's addendum §5 ("Every per-run sweep renews the lease before each run … and
 * stops when it has lost it") and the monitor's recovery. Five runs whose steps a gone worker holds (no stuck
 * reason yet). The oldest one's run row is held by another session, so the `owner_gone` sweep of a monitor pass
 * waits on it (allowance 60 s); while it waits, another replica takes the monitor's lease; then the row is let
 * go. Does the sweep mark no further run? Once the other replica gives the lease up, does the next pass mark
 * the rest?
 */
describe('review 63: the owner_gone sweep and a lease lost mid-sweep (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let held: HeldRows | undefined;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 6 });
    t = await createTestEngine({ db, flows: [holding], actions, config: { sweeps: { held_run_wait_ms: 60_000 } } });
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    await t?.close();
    await db?.close();
  });

  it('held: no run is marked after the lease is lost, and the next pass with the lease marks the rest', async () => {
    const [oldest] = await seedOrphans(db, { count: 1, repairCount: 0, goneMinutesAgo: 60 });
    const rest = await seedOrphans(db, { count: 4, repairCount: 0, goneMinutesAgo: 30 });
    held = await holdRuns(db.url!, [oldest!]);
    const pass = t.engine.monitorPass({ doctor: false, expiration: false });
    await waitForWaiters(db, held.pid);
    // Another replica takes the lease (as after this one's lapsed).
    await db.prisma.$executeRaw`
      update "sagaflow"."leases" set holder = 'r63-replica-b', expires_at = now() + interval '1 hour', renewed_at = now()
       where name = 'monitor'`;
    await held.rollback();
    held = undefined;
    const first = await pass;
    const marked = async () =>
      (await db.prisma.flowRun.findMany({ where: { id: { in: rest } }, select: { stuck_reason: true } })).filter((r) =>
        r.stuck_reason?.startsWith('owner_gone:'),
      ).length;
    const markedAfterLoss = await marked();
    const whileOtherHolds = await t.engine.monitorPass({ doctor: false, expiration: false });
    await db.prisma.$executeRaw`delete from "sagaflow"."leases" where name = 'monitor' and holder = 'r63-replica-b'`;
    const next = await t.engine.monitorPass({ doctor: false, expiration: false });
    expect(
      { markedAfterLoss, otherHolds: whileOtherHolds.swept, nextSwept: next.swept, markedAfterNext: await marked() },
      JSON.stringify({ first: first.swept ? first.orphans : first, next: next.swept ? next.orphans : next }),
    ).toEqual({ markedAfterLoss: 0, otherHolds: false, nextSwept: true, markedAfterNext: 4 });
  }, 60_000);
});
