import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction } from '../../../src/definitions/define-action.ts';
import { defineFlow } from '../../../src/definitions/define-flow.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { untilEnded } from './support/until-ended.ts';

/**
 * Review 49 (6). A flow whose code schedules a step after every step (a loop with no exit, a bug one
 * deploy away) grows its run for ever. Temporal warns at 10,240 history events and terminates a run at
 * 51,200; here every step is at least two history events (action.started, action.completed), so 5,000
 * steps is past Temporal's warning. Is there a guard, or at least something an operator can see (a
 * stuck reason, an anomaly) before the run's history is unbounded? And can it be stopped?
 */
const spin = defineAction({ name: 'r49.spin', run: (i: { i: number }) => Promise.resolve({ i: i.i }) });
const forever = defineFlow({
  name: 'r49.forever',
  version: 1,
  run: async (ctx) => {
    for (let i = 0; ; i++) await ctx.action(spin, { i }).run();
  },
});

describe(`a flow that schedules a step after every step (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  let runId = '';
  beforeAll(async () => {
    t = await openTestEngine({ flows: [forever], actions: [spin] });
    ({ runId } = await t.engine.startFlow(forever, {}));
    t.engine.startWorkers();
    // Progress, not time: let it record 5,000 steps (10,000+ history events).
    await waitFor(
      'the run to record 5,000 steps',
      async () => ((await t.db.prisma.actionRun.count({ where: { run_id: runId } })) >= 5000 ? true : undefined),
      400_000,
    );
  }, 420_000);
  afterAll(async () => {
    await t?.closeAll();
  });

  it('is stopped or flagged to operators before its history passes 10,000 events', async () => {
    const run = await t.db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    const events = await t.db.prisma.flowEvent.count({ where: { run_id: runId } });
    const anomalies = await t.db.prisma.anomalyLog.count({ where: { run_id: runId } });
    const seen = { status: run.status, stuckReason: run.stuck_reason, anomalies, events };
    // A guard either ends the run (Failed / Terminated, naming the limit) or keeps it open with a reason.
    const flagged =
      !['Pending', 'Running', 'Waiting', 'Compensating'].includes(run.status) ||
      run.stuck_reason !== null ||
      anomalies > 0;
    expect(flagged, JSON.stringify(seen)).toBe(true);
  });

  it('an operator can terminate it, and nothing is recorded for it after', { timeout: 120_000 }, async () => {
    expect(await t.engine.terminate(runId, { reason: 'review 49: runaway loop' })).toEqual({ terminated: true });
    const run = await untilEnded(t, runId, 60_000);
    expect(run.status).toBe('Terminated');
    const steps = await t.db.prisma.actionRun.count({ where: { run_id: runId } });
    const events = await t.db.prisma.flowEvent.count({ where: { run_id: runId } });
    await t.engine.stopWorkers();
    expect(await t.db.prisma.actionRun.count({ where: { run_id: runId } })).toBe(steps);
    expect(await t.db.prisma.flowEvent.count({ where: { run_id: runId } })).toBe(events);
    // A step in flight at the terminate keeps its row Running, by design (ADR 0091): at most that one.
    expect(await t.db.prisma.actionRun.count({ where: { run_id: runId, status: 'Running' } })).toBeLessThanOrEqual(1);
  });
});
