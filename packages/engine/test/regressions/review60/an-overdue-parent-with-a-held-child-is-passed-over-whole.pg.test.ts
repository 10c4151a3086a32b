import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineFlow, type Json } from '../../../src/index.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * Review 60 (ADR 0134 §1: the monitor's expiry takes the run's row with skip locked and "waits for any
 * other row at most 1 s"; seed 000: an overdue run is expired once, its rollback planned; invariant 1).
 * Attacked: an overdue parent parked on its open child, the CHILD's row held by another session (the
 * parent's own row free). The expiry locks the parent, then cancels its open tree, which meets the held
 * child after the parent's row was taken. Is anything of the parent's expiry left half-done (the parent
 * Expired without its child's cancel, a run.expired event without the status), is the other overdue run
 * still expired in the same pass, and once the child is let go is the parent expired exactly once?
 */
const child = defineFlow({
  name: 'r60-held-child',
  version: 1,
  run: async (ctx) => ctx.awaitSignal<Json>('go', { timeoutSeconds: 3600 }),
});
const parent = defineFlow({
  name: 'r60-overdue-parent',
  version: 1,
  run: async (ctx) => ctx.child(child, null),
});

describe('review 60: an overdue parent whose child another session holds (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let held: HeldRows | undefined;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({ db, flows: [parent, child, waiter], actions });
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    await t?.close();
    await db?.close();
  });

  it('the parent is passed over whole while its child is held, the other run expires, and then the parent expires once', async () => {
    const { engine, clock } = t;
    const p = await engine.startFlow(parent, null, { expiresInSeconds: 60 });
    await t.drive(p.runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    const c = await waitFor('the child to park', async () => {
      const row = await db.prisma.flowRun.findFirst({ where: { parent_run_id: p.runId } });
      return row?.status === 'Waiting' ? row : undefined;
    });
    const other = await engine.startFlow(waiter, null, { expiresInSeconds: 120 });
    await t.drive(other.runId, { skipTime: false, until: (d) => d.run.status === 'Waiting' });
    await engine.stopWorkers();
    clock.advance(300_000);
    held = await holdRuns(db.url!, [c.id]);

    const pass = await engine.monitorPass({ doctor: false });
    const read = async () => {
      const [pr, cr, or] = await Promise.all(
        [p.runId, c.id, other.runId].map((id) => db.prisma.flowRun.findUniqueOrThrow({ where: { id } })),
      );
      const expiredEvents = await db.prisma.flowEvent.count({ where: { run_id: p.runId, type: 'run.expiry_started' } });
      return {
        parent: pr!.status,
        parentExpired: pr!.expired_at !== null,
        parentCancelRequested: pr!.cancel_requested_at !== null,
        child: cr!.status,
        childCancelRequested: cr!.cancel_requested_at !== null,
        otherExpired: or!.expired_at !== null,
        parentExpiredEvents: expiredEvents,
      };
    };
    const whileHeld = await read();
    expect({ swept: pass.swept, whileHeld }).toEqual({
      swept: true,
      whileHeld: {
        parent: 'Waiting',
        parentExpired: false,
        parentCancelRequested: false,
        child: 'Waiting',
        childCancelRequested: false,
        otherExpired: true,
        parentExpiredEvents: 0,
      },
    });

    await held.rollback();
    held = undefined;
    await engine.monitorPass({ doctor: false });
    await engine.monitorPass({ doctor: false });
    const after = await read();
    expect({
      parentExpired: after.parentExpired,
      childCancelRequested: after.childCancelRequested,
      parentExpiredEvents: after.parentExpiredEvents,
    }).toEqual({ parentExpired: true, childCancelRequested: true, parentExpiredEvents: 1 });
  }, 40_000);
});
