import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { EngineError, RepairCommand } from '../../src/index.ts';
import { recordStepOutcome } from '../../src/store/record-step-outcome.ts';
import { testDbKind } from '../support/test-database.ts';
import { holding } from './support/repair-fixtures.ts';
import { useCatalogue } from './support/catalogue-harness.ts';
import { snapshotTables, without } from './support/snapshot.ts';

/** run.reclaim_step of an action step and of a compensation held by a gone worker (ADR 0031), and its refusals. How each command is proved: support/catalogue-harness.ts. */
describe(`reclaim repairs (${testDbKind()})`, () => {
  const c = useCatalogue();
  const { who, parkedRun, waitingRun, stepCmd, proveCommand } = c;

  it('run.reclaim_step puts a step held by a gone worker back to Pending; its late outcome is rejected', async () => {
    const { t } = c;
    t.faults.crashAfterClaim('rep-held');
    // parkedRun stops the workers: the worker that claimed the step is gone from then on.
    // The run's own status too: a snapshot between the step's claim and the run's move to Running drafts
    // against a status the run leaves a moment later (seen in CI: expectedHolds false).
    const d = await parkedRun(holding, (x) => x.actions[0]?.status === 'Running' && x.run.status === 'Running');
    const { applied } = await proveCommand(stepCmd('run.reclaim_step', d, 1));
    expect(applied.effects.transitions).toEqual([{ subject: 'step 1 (rep-held)', from: 'Running', to: 'Pending' }]);
    const row = await t.db.prisma.actionRun.findFirstOrThrow({ where: { run_id: d.run.id, sequence: 1 } });
    expect(row).toMatchObject({ status: 'Pending', attempts: 1, claimed_by: null });
    const late = await recordStepOutcome(t.db.prisma, {
      table: 'action_runs',
      id: row.id,
      attempts: 1,
      outcome: { kind: 'completed', output: { from: 'the dead worker' } },
      now: t.clock.now(),
    });
    expect(late).toBe('rejected');
    const done = await t.drive(d.run.id, { skipTime: false });
    expect(done.run).toMatchObject({ status: 'Completed', output: { from: 'worker' } });
    expect(done.actions[0]).toMatchObject({ status: 'Completed', attempts: 2 });
  });

  it('run.reclaim_step is refused while the worker holding the step is alive', async () => {
    const { t } = c;
    t.faults.crashAfterClaim('rep-held');
    const { runId } = await t.engine.startFlow(holding, null);
    // The workers keep running: the claim's owner heartbeats, so it is slow, not gone.
    const d = await t.drive(runId, {
      skipTime: false,
      until: (x) => x.actions[0]?.status === 'Running' && x.run.status === 'Running',
    });
    const cmd = stepCmd('run.reclaim_step', d, 1);
    const preview = await t.engine.repairs.preview(cmd);
    expect(preview).toMatchObject({ expectedHolds: true, applicable: false });
    expect(preview.blockers[0]).toMatch(/not known to be gone/);
    await expect(t.engine.repairs.apply(cmd)).rejects.toMatchObject({ code: 'repair_refused' });
    expect(await t.db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId } })).toMatchObject({
      status: 'Running',
      attempts: 1,
    });
    await t.engine.stopWorkers();
  });

  /** A cancelled run whose compensation rep-undo-a was claimed by a worker that then died and is gone. */
  async function orphanedCompensation() {
    const { t } = c;
    t.faults.crashAfterClaim('rep-undo-a');
    const w = await waitingRun();
    t.engine.startWorkers();
    await t.engine.cancel(w.run.id, { reason: 'to roll it back', cleanupSeconds: 3600 });
    const d = await t.drive(w.run.id, {
      skipTime: false,
      until: (x) => x.compensations[0]?.status === 'Running' && x.run.status === 'Compensating',
    });
    // Stopping the pool stops the worker that holds the compensation: gone, as far as the engine can tell.
    await t.engine.stopWorkers();
    return d;
  }
  const compensationCmd = (
    d: { run: { id: string; status: string }; compensations: { status: string; attempts: number }[] },
    at = { rollbackLevel: 1, ordinal: 0 },
  ) =>
    ({
      kind: 'run.reclaim_step',
      target: { runId: d.run.id, compensation: at },
      expected: {
        runStatus: d.run.status,
        stepStatus: d.compensations[0]!.status,
        stepAttempts: d.compensations[0]!.attempts,
      },
      ...who,
      idempotencyKey: randomUUID(),
    }) as RepairCommand;

  it('run.reclaim_step puts a compensation held by a gone worker back to Pending; the rollback runs it once more', async () => {
    const { t } = c;
    const d = await orphanedCompensation();
    expect(d.run).toMatchObject({ status: 'Compensating' });
    expect(d.run.safeRepairs).toContain('run.reclaim_step');
    const cmd = compensationCmd(d);
    const { applied } = await proveCommand(cmd);
    expect(applied.target).toEqual({ type: 'step', id: `${d.run.id}#rollback-1.0` });
    expect(applied.actual).toMatchObject({ step: { kind: 'compensation', name: 'rep-undo-a', status: 'Running' } });
    expect(applied.effects.transitions).toEqual([
      { subject: 'compensation rep-undo-a (rollback 1.0, undoing step 1)', from: 'Running', to: 'Pending' },
    ]);
    expect(applied.effects.notes[1]).toMatch(/compensation runs again as attempt 2/);
    const row = await t.db.prisma.compensationRun.findFirstOrThrow({ where: { run_id: d.run.id } });
    expect(row).toMatchObject({ status: 'Pending', attempts: 1, claimed_by: null });
    const late = await recordStepOutcome(t.db.prisma, {
      table: 'compensation_runs',
      id: row.id,
      attempts: 1,
      outcome: { kind: 'completed', output: { from: 'the dead worker' } },
      now: t.clock.now(),
    });
    expect(late, "the dead worker's late outcome is rejected").toBe('rejected');
    const done = await t.drive(d.run.id, { skipTime: false });
    expect(done.run.status).toBe('Cancelled');
    expect(done.compensations).toMatchObject([{ name: 'rep-undo-a', status: 'Completed', attempts: 2, output: null }]);
    const history = done.events.map((e) => e.type);
    expect(history.filter((x) => x === 'step.reclaimed')).toHaveLength(1);
    expect(done.events.find((e) => e.type === 'repair.applied')?.data).toMatchObject({
      command: 'run.reclaim_step',
      compensation: { rollbackLevel: 1, ordinal: 0 },
    });
  });

  it('run.reclaim_step on a compensation is refused, naming the field, and changes nothing: worker alive, not Running, wrong attempts, no such compensation', async () => {
    const { t } = c;
    t.faults.crashAfterClaim('rep-undo-a');
    const w = await waitingRun();
    t.engine.startWorkers();
    await t.engine.cancel(w.run.id, { reason: 'to roll it back', cleanupSeconds: 3600 });
    // The workers keep running: the claim's owner heartbeats, so it is slow, not gone.
    const d = await t.drive(w.run.id, {
      skipTime: false,
      until: (x) => x.compensations[0]?.status === 'Running' && x.run.status === 'Compensating',
    });
    // The pool holding the compensation stays up, and beats every few seconds: its heartbeat (the workers
    // table) may land between two snapshots or not, whatever the refusal does, so it is left out of them.
    const unchanged = (snapshot: Record<string, string>) => without(without(snapshot, 'repair_commands'), 'workers');
    const refusal = async (cmd: RepairCommand) => {
      const before = await snapshotTables(t.db);
      const err = await t.engine.repairs.apply(cmd).then(
        () => null,
        (e: unknown) => e as EngineError,
      );
      expect(unchanged(await snapshotTables(t.db)), 'a refusal changes nothing').toEqual(unchanged(before));
      return err;
    };
    const alive = compensationCmd(d);
    const preview = await t.engine.repairs.preview(alive);
    // Seen once in CI (s36): expectedHolds false, not reproduced in 12 runs under load; the state found says why.
    expect(
      preview,
      `drafted against ${JSON.stringify(alive.expected)}, found ${JSON.stringify(preview.actual)}`,
    ).toMatchObject({
      expectedHolds: true,
      applicable: false,
    });
    expect(preview.blockers[0]).toMatch(/compensation rep-undo-a .* is held by worker .* not known to be gone/);
    expect(await refusal(alive)).toMatchObject({ code: 'repair_refused', field: 'target' });
    const attempts = { ...alive, expected: { ...alive.expected, stepAttempts: 2 }, idempotencyKey: randomUUID() };
    expect(await refusal(attempts as RepairCommand)).toMatchObject({
      code: 'repair_conflict',
      field: 'expected.stepAttempts',
      details: { current: { step: { status: 'Running', attempts: 1 } } },
    });
    const missing = compensationCmd(d, { rollbackLevel: 1, ordinal: 1 });
    expect(await refusal(missing)).toMatchObject({ code: 'repair_conflict', field: 'target' });
    await t.engine.stopWorkers();
    // The worker is gone now: reclaimed once, the compensation is Pending, and a reclaim drafted
    // against that is refused for the status it names.
    await t.engine.repairs.apply(compensationCmd(d));
    const pending = { ...d, compensations: [{ status: 'Pending', attempts: 1 }] };
    const notRunning = await refusal(compensationCmd(pending));
    expect(notRunning).toMatchObject({ code: 'repair_refused', field: 'expected.stepStatus' });
    expect(notRunning?.message).toMatch(/is Pending; only a Running step or compensation is reclaimed/);
    const done = await t.drive(d.run.id, { skipTime: false });
    expect(done.run.status).toBe('Cancelled');
  });
});
