import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, NonRetryableError } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';

/**
 * ADR 0007: once the monitor has expired a run (expired_at set, run.expiry_started recorded), the run
 * "ends Expired whatever the code then throws", and the expiry is delivered at the run's live step.
 * executeRun decides the final status and the delivery from the run row it loaded when the replay
 * STARTED (execute-run.ts: `run.expired_at !== null`, and ReplaySession.cancelRequested reads
 * run.cancel_requested_at from that snapshot). A replay that was already under way when the sweep
 * expired the run never sees the expiry.
 */

const log: string[] = [];
const undoGate = gate();
const reserve = defineAction({
  name: 'ax-st-reserve',
  run: async (i: { id: string }) => (log.push(`reserve ${i.id}`), i),
});
const undo = defineAction({
  name: 'ax-st-undo',
  run: async (i: { id: string }) => {
    log.push(`undo started ${i.id}`);
    await undoGate.promise; // a slow compensation (a refund call taking its time)
    log.push(`undo finished ${i.id}`);
    return { ok: true };
  },
});
const decline = defineAction({
  name: 'ax-st-decline',
  run: async (): Promise<null> => {
    throw new NonRetryableError('card declined');
  },
});
/** A business failure, compensated by a slow undo. */
const slowUndo = defineFlow({
  name: 'ax-st-slow-undo',
  version: 1,
  run: async (ctx, input: { id: string }) => {
    try {
      await ctx.action(reserve, input).compensateWith(undo, (o) => ({ id: o.id }));
      return await ctx.action(decline, null);
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

/** The flow's code awaits something that is not the engine (a lookup) before its first step. */
const lookupGate = gate();
let lookups = 0;
const ship = defineAction({ name: 'ax-st-ship', run: async (i: { id: string }) => (log.push(`ship ${i.id}`), i) });
const unship = defineAction({
  name: 'ax-st-unship',
  run: async (i: { id: string }) => (log.push(`unship ${i.id}`), i),
});
const lookupThenShip = defineFlow({
  name: 'ax-st-lookup-then-ship',
  version: 1,
  run: async (ctx, input: { id: string }) => {
    // Only the first replay is slow; the sweep's planning replay and later replays are not.
    if (lookups++ === 0) await lookupGate.promise;
    try {
      await ctx.action(ship, input).compensateWith(unship, (o) => ({ id: o.id }));
      return { shipped: true };
    } catch (err) {
      await ctx.compensate();
      throw err;
    }
  },
});

describe(`adversarial expiry: a replay under way when the run is expired (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    undoGate.open();
    lookupGate.open();
    await db.close();
  });

  const types = async (runId: string) =>
    (await db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } })).map((e) => e.type);

  it('a run expired while its rollback is running ends Expired, not Compensated', async () => {
    const clock = new TestClock();
    const e = bareEngine(db, { flows: [slowUndo], actions: [reserve, undo, decline], clock });
    const { runId } = await e.startFlow(slowUndo, { id: 'a' }, { expiresInSeconds: 60 });
    const live = executeRun(e.runtime, runId);
    await waitFor(
      'the live replay to start the undo',
      async () => (log.includes('undo started a') ? true : undefined),
      30_000,
    );

    clock.advance(61_000);
    expect(await e.sweepExpiredRuns()).toEqual({ expired: [runId], failed: [] });
    const marked = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect(marked.expired_at).not.toBeNull();

    undoGate.open();
    await live;
    // Whatever else is queued (the sweep's wakes) runs too.
    for (let i = 0; i < 3; i++) await executeRun(e.runtime, runId);

    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const history = await types(runId);
    expect({ status: run.status, last: history.at(-1) }).toEqual({ status: 'Expired', last: 'run.expired' });
  });

  it('a run expired while its replay awaits a non-engine promise: the next step is not executed and the run ends Expired', async () => {
    const clock = new TestClock();
    const e = bareEngine(db, { flows: [lookupThenShip], actions: [ship, unship], clock });
    const { runId } = await e.startFlow(lookupThenShip, { id: 'b' }, { expiresInSeconds: 60 });
    const live = executeRun(e.runtime, runId);
    await waitFor("the live replay to reach the flow's lookup", async () => (lookups > 0 ? true : undefined), 30_000);
    expect(lookups).toBe(1);

    clock.advance(61_000);
    expect(await e.sweepExpiredRuns()).toEqual({ expired: [runId], failed: [] });
    const started = await db.prisma.flowEvent.findFirstOrThrow({
      where: { run_id: runId, type: 'run.expiry_started' },
    });
    expect(started.data).toMatchObject({ position: 1 }); // the plan: ship is the live step, not yet claimed

    lookupGate.open();
    await live;
    for (let i = 0; i < 3; i++) await executeRun(e.runtime, runId);

    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const shipRows = await db.prisma.actionRun.findMany({ where: { run_id: runId, name: 'ax-st-ship' } });
    expect({
      status: run.status,
      shipExecuted: log.includes('ship b'),
      shipCompleted: shipRows.some((r) => r.status === 'Completed'),
      history: await types(runId),
    }).toEqual({
      status: 'Expired',
      shipExecuted: false,
      shipCompleted: false,
      history: expect.arrayContaining(['run.expiry_started', 'run.expired']) as unknown,
    });
  });
});
