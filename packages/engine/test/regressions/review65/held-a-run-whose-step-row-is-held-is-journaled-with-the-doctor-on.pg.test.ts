import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { gate } from '../harness.ts';

/**
 * Review 65, HELD (ADR 0137's addendum: the step expiry notes the runs it skips as held). A run's step (deadline
 * 60 s, reclaim deadline 30 s) hangs on its worker; the clock passes both; another session holds the STEP's row
 * for good (not the run's). Monitor passes at 0, 30, 61 and 121 s. With the doctor on (the run is its R3
 * candidate) and off: one `run_held` on the run (sweep `step expiry`), the step left Running. (With the doctor
 * on, the doctor does not forget the run here: the worker's own statement on the step, queued behind the held
 * step row, holds the run's row, so the doctor finds the run held too.)
 */
describe('held: a run whose overdue step row is held for good is journaled, the doctor on or off (postgres)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  let holder: pg.Client | undefined;
  let hang = gate();
  const slow = defineAction({ name: 'r65-held-step', run: async () => (await hang.promise, 'late') });
  const flow = defineFlow({
    name: 'r65-held-step-flow',
    version: 1,
    run: async (ctx) => ctx.action(slow, null).reclaimStaleAfter(30).expiresIn(60).run(),
  });
  beforeEach(async () => {
    hang = gate();
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({
      db,
      flows: [flow],
      actions: [slow],
      config: { sweeps: { held_run_wait_ms: 200 }, repair: { enabled: true } },
    });
  });
  afterEach(async () => {
    await holder?.end().catch(() => undefined);
    holder = undefined;
    hang.open();
    await t?.close();
    await db?.close();
  });

  /** Starts the run, waits for its step to be Running on the worker, passes both deadlines, holds the step's row. */
  async function heldOverdueStep(): Promise<{ runId: string; stepId: string }> {
    const { runId } = await t.engine.startFlow(flow, null);
    t.engine.startWorkers();
    const step = await waitFor('the step to be Running', async () => {
      const s = await db.prisma.actionRun.findFirst({ where: { run_id: runId, name: slow.name } });
      return s?.status === 'Running' ? s : undefined;
    });
    t.clock.advance(120_000);
    holder = new pg.Client({ connectionString: db.url! });
    await holder.connect();
    await holder.query('begin');
    await holder.query('select id from sagaflow.action_runs where id = $1 for update', [step.id]);
    return { runId, stepId: step.id };
  }

  async function passes(doctor: boolean) {
    const seen: { stepsExpired: number; doctorTook: boolean }[] = [];
    for (const advance of [0, 30_000, 31_000, 60_000]) {
      t.clock.advance(advance);
      const pass = await t.engine.monitorPass({ doctor });
      seen.push({ stepsExpired: pass.swept ? pass.steps.expired : -1, doctorTook: pass.swept && pass.doctor !== null });
    }
    return seen;
  }

  it('with the doctor on (an R3 candidate): journaled once', async () => {
    const { runId, stepId } = await heldOverdueStep();
    const seen = await passes(true);
    const journal = await db.prisma.anomalyLog.findMany({ where: { run_id: runId, code: 'run_held' } });
    const step = await db.prisma.actionRun.findUniqueOrThrow({ where: { id: stepId } });
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect({
      stepsExpired: seen.map((s) => s.stepsExpired),
      step: step.status,
      stuckReason: run.stuck_reason,
      runHeld: journal.map((e) => ({ site: e.site, sweep: (e.details as { sweep?: string }).sweep })),
    }).toEqual({
      stepsExpired: [0, 0, 0, 0],
      step: 'Running',
      stuckReason: null,
      runHeld: [{ site: 'monitor.run', sweep: 'step expiry' }],
    });
  }, 30_000);

  it('without the doctor: journaled once', async () => {
    const { runId } = await heldOverdueStep();
    const seen = await passes(false);
    const journal = await db.prisma.anomalyLog.findMany({ where: { run_id: runId, code: 'run_held' } });
    expect({
      stepsExpired: seen.map((s) => s.stepsExpired),
      runHeld: journal.map((e) => ({ site: e.site, sweep: (e.details as { sweep?: string }).sweep })),
    }).toEqual({
      stepsExpired: [0, 0, 0, 0],
      runHeld: [{ site: 'monitor.run', sweep: 'step expiry' }],
    });
  }, 30_000);
});
