import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, NonRetryableError } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';

/**
 * Seed 000 / README: a kick "reads the same deadline R3 does and skips a Running row that has not
 * passed it" ("it refuses to touch a step that is Running and not past its reclaim deadline"), and
 * "Compensations carry the same attempts counter and the same fence". kick-run.ts only looks at
 * action_runs, so a run parked on a compensation a live worker is executing is kicked anyway: its
 * repair budget is refilled, a job is sent and run.kicked is recorded.
 */
const log: string[] = [];
const undoGate = gate();
const reserve = defineAction({ name: 'ax-kc-reserve', run: async (i: { id: string }) => i });
const undo = defineAction({
  name: 'ax-kc-undo',
  run: async (i: { id: string }) => {
    log.push(`undo started ${i.id}`);
    await undoGate.promise;
    return { ok: true };
  },
});
const decline = defineAction({
  name: 'ax-kc-decline',
  run: async (): Promise<null> => {
    throw new NonRetryableError('card declined');
  },
});
const flow = defineFlow({
  name: 'ax-kc-flow',
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

describe(`adversarial expiry: kick on a run whose compensation is Running (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    undoGate.open();
    await db.close();
  });

  it('skips a compensation that is Running and not past its reclaim deadline, like an action', async () => {
    const clock = new TestClock();
    const e = bareEngine(db, { flows: [flow], actions: [reserve, undo, decline], clock });
    const { runId } = await e.startFlow(flow, { id: 'a' });
    const live = executeRun(e.runtime, runId);
    await waitFor(
      'the live replay to start the undo',
      async () => (log.includes('undo started a') ? true : undefined),
      30_000,
    );
    const comp = await db.prisma.compensationRun.findFirstOrThrow({ where: { run_id: runId } });
    expect(comp).toMatchObject({ status: 'Running', reclaim_stale_at: null });

    const jobsBefore = await db.prisma.job.count({ where: { run_id: runId } });
    const kicked = await e.kick(runId);
    const jobsAfter = await db.prisma.job.count({ where: { run_id: runId } });
    const kickedEvents = await db.prisma.flowEvent.count({ where: { run_id: runId, type: 'run.kicked' } });

    undoGate.open();
    await live;
    expect({ kicked: kicked.kicked, newJobs: jobsAfter - jobsBefore, kickedEvents }).toEqual({
      kicked: false,
      newJobs: 0,
      kickedEvents: 0,
    });
  });
});
