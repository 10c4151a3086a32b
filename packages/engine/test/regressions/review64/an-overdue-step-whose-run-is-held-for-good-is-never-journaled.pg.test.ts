import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { holdRuns, type HeldRows } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { gate } from '../harness.ts';

/**
 * Review 64, attacking ADR 0137 ("every stuck run is visible with its reason"; "a row held for good … keeps
 * the run from being expired"). The monitor's step expiry (seed 000: "sweeps overdue steps/runs to Expired")
 * is a set-based statement that skips a step whose run another session holds (`for key share of r skip
 * locked`), not `onMonitoredRun`: the run is never noted, so however long it stays held, nothing is journaled.
 *
 * A run's step (business deadline 60 s) hangs on its worker. Its deadline passes; another session holds the
 * run's row for good. Monitor passes at 0 s, 30 s, 61 s and 121 s of the engine's clock leave the step
 * Running, past its deadline, with nothing journaled and no stuck reason. Let go, the next pass expires it
 * (it was the sweep's candidate all along, only held). Expected, as for an overdue run: `run_held` on the run
 * once it has been held for a minute.
 */
describe('an overdue step whose run is held for good is journaled (postgres)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let held: HeldRows | undefined;
  const hang = gate();
  const slow = defineAction({ name: 'r64-slow', run: async () => (await hang.promise, 'late') });
  const flow = defineFlow({
    name: 'r64-slow-flow',
    version: 1,
    run: async (ctx) => ctx.action(slow, null).expiresIn(60).run(),
  });
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({ db, flows: [flow], actions: [slow], config: { sweeps: { held_run_wait_ms: 200 } } });
  });
  afterAll(async () => {
    await held?.rollback().catch(() => undefined);
    hang.open();
    await t?.close();
    await db?.close();
  });

  it('an overdue step held past a minute: run_held on its run', async () => {
    const { runId } = await t.engine.startFlow(flow, null);
    t.engine.startWorkers();
    await waitFor('the step to be Running', async () => {
      const step = await db.prisma.actionRun.findFirst({ where: { run_id: runId, name: slow.name } });
      return step?.status === 'Running' ? step : undefined;
    });
    t.clock.advance(120_000);
    held = await holdRuns(db.url!, [runId]);
    const expiredPerPass: number[] = [];
    for (const step of [0, 30_000, 31_000, 60_000]) {
      t.clock.advance(step);
      const pass = await t.engine.monitorPass({ doctor: false });
      expiredPerPass.push(pass.swept ? pass.steps.expired : -1);
    }
    const whileHeld = await db.prisma.anomalyLog.findMany({ where: { run_id: runId, code: 'run_held' } });
    const stepWhileHeld = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, name: slow.name } });
    const runWhileHeld = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    await held.rollback();
    held = undefined;
    const released = await t.engine.monitorPass({ doctor: false });
    expect({
      expiredPerPass,
      stepWhileHeld: [stepWhileHeld.status, stepWhileHeld.expires_at !== null],
      stuckReason: runWhileHeld.stuck_reason,
      afterRelease: released.swept ? released.steps.expired : -1,
      runHeld: whileHeld.map((e) => ({ site: e.site, namesRun: e.message.includes(runId) })),
    }).toEqual({
      expiredPerPass: [0, 0, 0, 0],
      stepWhileHeld: ['Running', true],
      stuckReason: null,
      afterRelease: 1,
      runHeld: [{ site: 'monitor.run', namesRun: true }],
    });
  }, 30_000);
});
