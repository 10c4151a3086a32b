import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError, type RepairCommand, type RepairResult } from '../../src/index.ts';
import { recordStepOutcome } from '../../src/store/record-step-outcome.ts';
import { openTestEngine } from '../support/open-test-engine.ts';
import { testDbKind } from '../support/test-database.ts';
import { actions, changing, flows, holding, retrying, switches, ticket, waiter } from './support/repair-fixtures.ts';
import { addedRows, snapshotTables, without } from './support/snapshot.ts';

type T = Awaited<ReturnType<typeof openTestEngine>>;

/**
 * Issue 9's guarantees for every command of the catalogue: a preview writes nothing; a stale
 * expected state changes nothing (only the audit row saying so); apply does what the preview said,
 * with its history and audit rows; the same idempotency key has no second effect.
 */
describe(`repair catalogue (${testDbKind()})`, () => {
  let t: T;
  beforeAll(async () => {
    t = await openTestEngine({
      flows,
      actions,
      processes: [ticket],
      config: { processes: { quarantine_after_seconds: 60 } },
    });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  const who = { actor: 'ops@example.test', reason: 'issue 9 catalogue test' };

  /** Drives a run until `until`, then stops the workers so nothing but the repair moves it. */
  async function parkedRun(
    flow: (typeof flows)[number],
    until: Parameters<T['drive']>[1] extends infer O ? (O extends { until?: infer U } ? U : never) : never,
  ) {
    const { runId } = await t.engine.startFlow(flow, null);
    const d = await t.drive(runId, { skipTime: false, until });
    await t.engine.stopWorkers();
    return d;
  }

  async function waitingRun() {
    switches.variant = 'a';
    return parkedRun(waiter, (d) => d.run.waitingFor?.startsWith('signal') ?? false);
  }

  async function ticketAt(state: 'Open' | 'Review') {
    // Runs left open by earlier tests must not move while this test compares snapshots.
    await t.engine.stopWorkers();
    const key = `t-${randomUUID().slice(0, 8)}`;
    await t.engine.processes.deliver(ticket, { id: `open-${key}`, type: 'Opened', payload: { key } });
    if (state === 'Review')
      await t.engine.processes.deliver(ticket, { id: `rev-${key}`, type: 'Reviewed', payload: { key } });
    const found = await t.db.prisma.sagaInstance.findFirstOrThrow({ where: { correlation_key: key } });
    return { key, id: found.id, state: found.current_state, version: found.version };
  }

  async function quarantinedTicket() {
    const k = await ticketAt('Open');
    const poison = { id: `poison-${k.key}`, type: 'Note', payload: { key: k.key, note: 'poison pill' } };
    await expect(t.engine.processes.deliver(ticket, poison)).rejects.toThrow(/cannot take note/);
    t.clock.advance(61_000);
    expect(await t.engine.processes.deliver(ticket, poison)).toMatchObject({ outcome: 'quarantined' });
    const row = await t.db.prisma.sagaInstance.findUniqueOrThrow({ where: { id: k.id } });
    return { ...k, state: row.current_state, version: row.version };
  }

  const runCmd = (kind: string, d: { run: { id: string; status: string } }, extra: object = {}) =>
    ({
      kind,
      target: { runId: d.run.id },
      expected: { runStatus: d.run.status },
      ...who,
      idempotencyKey: randomUUID(),
      ...extra,
    }) as RepairCommand;
  const stepCmd = (
    kind: string,
    d: { run: { id: string; status: string }; actions: { sequence: number; status: string; attempts: number }[] },
    sequence: number,
    extra: object = {},
  ) => {
    const step = d.actions.find((a) => a.sequence === sequence)!;
    return {
      kind,
      target: { runId: d.run.id, stepSequence: sequence },
      expected: { runStatus: d.run.status, stepStatus: step.status, stepAttempts: step.attempts },
      ...who,
      idempotencyKey: randomUUID(),
      ...extra,
    } as RepairCommand;
  };
  const instanceCmd = (kind: string, i: { id: string; state: string; version: number }, extra: object = {}) =>
    ({
      kind,
      target: { instanceId: i.id },
      expected: { state: i.state, version: i.version },
      ...who,
      idempotencyKey: randomUUID(),
      ...extra,
    }) as RepairCommand;

  /** The expected state the command was not drafted against: the same command, one step behind. */
  function stale(cmd: RepairCommand): RepairCommand {
    const e = cmd.expected as Record<string, unknown>;
    const expected =
      'version' in e
        ? { ...e, version: (e.version as number) + 1 }
        : 'stepAttempts' in e
          ? { ...e, stepAttempts: (e.stepAttempts as number) + 1 }
          : { ...e, runStatus: e.runStatus === 'Waiting' ? 'Running' : 'Waiting' };
    return { ...cmd, expected, idempotencyKey: randomUUID() } as RepairCommand;
  }

  /** The four guarantees, in order; returns the applied result and the tables before and after it. */
  async function proveCommand(cmd: RepairCommand) {
    const before = await snapshotTables(t.db);
    const preview = await t.engine.repairs.preview(cmd);
    expect(await snapshotTables(t.db), 'a preview writes nothing').toEqual(before);
    expect(preview, JSON.stringify(preview.actual)).toMatchObject({
      expectedHolds: true,
      applicable: true,
      blockers: [],
    });

    const staleCmd = stale(cmd);
    const conflict = await t.engine.repairs.apply(staleCmd).then(
      () => null,
      (e: unknown) => e,
    );
    expect(conflict).toBeInstanceOf(EngineError);
    expect(conflict).toMatchObject({ code: 'repair_conflict', details: { current: preview.actual } });
    const afterStale = await snapshotTables(t.db);
    expect(without(afterStale, 'repair_commands'), 'a stale expected state changes nothing').toEqual(
      without(before, 'repair_commands'),
    );
    expect(addedRows(before, afterStale, 'repair_commands')).toMatchObject([
      { command: cmd.kind, status: 'conflict', idempotency_key: staleCmd.idempotencyKey },
    ]);

    const applied: RepairResult = await t.engine.repairs.apply(cmd);
    expect(applied).toMatchObject({ status: 'applied', replayed: false, kind: cmd.kind });
    expect(applied.effects, 'apply does what the preview said').toEqual(preview.effects);
    const after = await snapshotTables(t.db);
    const audit = addedRows(afterStale, after, 'repair_commands');
    expect(audit).toMatchObject([
      { id: applied.id, command: cmd.kind, status: 'applied', actor: who.actor, reason: who.reason },
    ]);
    // What the preview listed is what landed: jobs, signals, outbox rows and history rows.
    expect(addedRows(afterStale, after, 'jobs')).toHaveLength(applied.effects.jobs.length);
    expect(addedRows(afterStale, after, 'signals')).toHaveLength(applied.effects.signals.length);
    expect(addedRows(afterStale, after, 'outbox')).toHaveLength(applied.effects.outboxMessages.length);
    if ('runId' in cmd.target) {
      const events = (addedRows(afterStale, after, 'flow_events') as { type: string; data: { repair?: string } }[]).map(
        (e) => e.type,
      );
      expect(events).toContain('repair.applied');
      for (const h of applied.effects.history.filter((x) => !x.includes('(child'))) expect(events).toContain(h);
    } else {
      const rows = addedRows(afterStale, after, 'process_transitions') as { outcome: string }[];
      expect(rows.map((r) => r.outcome)).toContain('repair');
    }

    const again = await t.engine.repairs.apply(cmd);
    expect(again).toMatchObject({ id: applied.id, replayed: true, status: 'applied', effects: applied.effects });
    expect(await snapshotTables(t.db), 'a replayed idempotency key has no second effect').toEqual(after);
    return { applied, before, after };
  }

  it('run.kick sends a fresh job for the parked step', async () => {
    const d = await waitingRun();
    const { applied } = await proveCommand(runCmd('run.kick', d));
    expect(applied.effects.jobs).toHaveLength(1);
  });

  it('run.signal buffers the signal and wakes the run, which then completes with it', async () => {
    const d = await waitingRun();
    await proveCommand(runCmd('run.signal', d, { signal: { name: 'go', payload: { approved: true } } }));
    const done = await t.drive(d.run.id, { skipTime: false });
    expect(done.run).toMatchObject({ status: 'Completed', output: { approved: true } });
  });

  it('run.cancel requests cancellation and lists the compensation it will start', async () => {
    const d = await waitingRun();
    const { applied } = await proveCommand(runCmd('run.cancel', d, { cleanupSeconds: 600 }));
    expect(applied.effects.compensations).toEqual([{ actionSequence: 1, name: 'rep-undo-a' }]);
    const run = await t.db.prisma.flowRun.findUniqueOrThrow({ where: { id: d.run.id } });
    expect(run.cancel_reason).toBe(who.reason);
  });

  it('run.terminate closes the run as Terminated without compensation', async () => {
    const d = await waitingRun();
    await proveCommand(runCmd('run.terminate', d));
    const after = await t.engine.getRun(d.run.id);
    expect(after?.run.status).toBe('Terminated');
    expect(after?.compensations).toEqual([]);
    expect(after?.run.safeRepairs).toEqual([]);
  });

  it('run.expire expires the run now and starts its rollback', async () => {
    const d = await waitingRun();
    const { applied } = await proveCommand(runCmd('run.expire', d, { cleanupSeconds: 600 }));
    expect(applied.effects.compensations).toEqual([{ actionSequence: 1, name: 'rep-undo-a' }]);
    const done = await t.drive(d.run.id, { skipTime: false });
    expect(done.run.status).toBe('Expired');
    expect(done.compensations.map((c) => [c.name, c.status])).toEqual([['rep-undo-a', 'Completed']]);
  });

  it('run.retry_step makes a Failed step due now instead of an hour later', async () => {
    switches.flakyFails = true;
    // Parked, not just Failed: the step's failure commits before the replay parks the run.
    const d = await parkedRun(retrying, (x) => x.actions[0]?.status === 'Failed' && x.run.status === 'Waiting');
    await proveCommand(stepCmd('run.retry_step', d, 1));
    switches.flakyFails = false;
    const done = await t.drive(d.run.id, { skipTime: false });
    expect(done.run.status).toBe('Completed');
    expect(done.actions[0]).toMatchObject({ status: 'Completed', attempts: 2 });
  });

  it('run.complete_step records an operator-supplied output for a step whose worker died', async () => {
    t.faults.crashAfterClaim('rep-held');
    const d = await parkedRun(holding, (x) => x.actions[0]?.status === 'Running');
    const { applied } = await proveCommand(stepCmd('run.complete_step', d, 1, { output: { from: 'operator' } }));
    expect(applied.effects.transitions).toEqual([{ subject: 'step 1 (rep-held)', from: 'Running', to: 'Completed' }]);
    const done = await t.drive(d.run.id, { skipTime: false });
    expect(done.run).toMatchObject({ status: 'Completed', output: { from: 'operator' } });
  });

  it('run.reclaim_step puts a step held by a gone worker back to Pending; its late outcome is rejected', async () => {
    t.faults.crashAfterClaim('rep-held');
    // parkedRun stops the workers: the worker that claimed the step is gone from then on.
    const d = await parkedRun(holding, (x) => x.actions[0]?.status === 'Running');
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
    t.faults.crashAfterClaim('rep-held');
    const { runId } = await t.engine.startFlow(holding, null);
    // The workers keep running: the claim's owner heartbeats, so it is slow, not gone.
    const d = await t.drive(runId, { skipTime: false, until: (x) => x.actions[0]?.status === 'Running' });
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
    t.faults.crashAfterClaim('rep-undo-a');
    const w = await waitingRun();
    t.engine.startWorkers();
    await t.engine.cancel(w.run.id, { reason: 'to roll it back', cleanupSeconds: 3600 });
    const d = await t.drive(w.run.id, { skipTime: false, until: (x) => x.compensations[0]?.status === 'Running' });
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
    t.faults.crashAfterClaim('rep-undo-a');
    const w = await waitingRun();
    t.engine.startWorkers();
    await t.engine.cancel(w.run.id, { reason: 'to roll it back', cleanupSeconds: 3600 });
    // The workers keep running: the claim's owner heartbeats, so it is slow, not gone.
    const d = await t.drive(w.run.id, { skipTime: false, until: (x) => x.compensations[0]?.status === 'Running' });
    const refusal = async (cmd: RepairCommand) => {
      const before = await snapshotTables(t.db);
      const err = await t.engine.repairs.apply(cmd).then(
        () => null,
        (e: unknown) => e as EngineError,
      );
      expect(without(await snapshotTables(t.db), 'repair_commands'), 'a refusal changes nothing').toEqual(
        without(before, 'repair_commands'),
      );
      return err;
    };
    const alive = compensationCmd(d);
    const preview = await t.engine.repairs.preview(alive);
    expect(preview).toMatchObject({ expectedHolds: true, applicable: false });
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

  it('run.resume_from_step re-runs a replay-blocked run from the step that no longer matches', async () => {
    switches.variant = 'a';
    const { runId } = await t.engine.startFlow(changing, null);
    await t.drive(runId, { skipTime: false, until: (x) => x.run.waitingFor?.startsWith('signal') ?? false });
    switches.variant = 'b';
    await t.engine.kick(runId);
    const d = await t.drive(runId, { skipTime: false, until: (x) => x.run.stuckReason !== null });
    await t.engine.stopWorkers();
    expect(d.run.stuckReason).toMatch(/^replay_blocked/);
    expect(d.run.safeRepairs).toEqual(['run.kick', 'run.resume_from_step', 'run.terminate']);
    const { applied } = await proveCommand(stepCmd('run.resume_from_step', d, 1));
    expect(applied.effects.transitions.map((x) => x.to)).toEqual(['forgotten', 'forgotten']);
    await t.engine.signal(runId, 'go');
    const done = await t.drive(runId, { skipTime: false });
    expect(done.run).toMatchObject({ status: 'Completed', output: { did: 'c' } });
    const resumed = done.events.find((e) => e.type === 'run.resumed_from_step');
    expect(resumed?.data).toMatchObject({
      forgotten: [{ sequence: 1, name: 'rep-a', status: 'Completed' }, { sequence: 2 }],
    });
  });

  it('instance.release (skip) returns the instance to ACTIVE and keeps the skipped message', async () => {
    switches.poisonFails = true;
    const q = await quarantinedTicket();
    const retry = await t.engine.repairs.preview(instanceCmd('instance.release', q, { mode: 'retry' }));
    expect(retry).toMatchObject({ expectedHolds: true, applicable: false });
    expect(retry.blockers[0]).toMatch(/fails again now \(cannot take note "poison pill"\)/);
    const { applied } = await proveCommand(instanceCmd('instance.release', q, { mode: 'skip' }));
    expect(applied.effects.transitions).toEqual([
      { subject: `instance ${q.id} status`, from: 'QUARANTINED', to: 'ACTIVE' },
    ]);
    expect(await t.engine.processes.find(q.id)).toMatchObject({ status: 'ACTIVE', failure: null });
    const { transitions } = await t.engine.processes.history(q.id);
    expect(transitions.at(-1)?.detail).toMatchObject({ skippedMessage: { payload: { note: 'poison pill' } } });
  });

  it('instance.release (retry) applies the message it stopped on once the cause is fixed', async () => {
    switches.poisonFails = true;
    const q = await quarantinedTicket();
    switches.poisonFails = false;
    const { applied } = await proveCommand(instanceCmd('instance.release', q, { mode: 'retry' }));
    expect(applied.effects.transitions).toEqual([
      { subject: `instance ${q.id} status`, from: 'QUARANTINED', to: 'ACTIVE' },
      { subject: `instance ${q.id}`, from: 'Open', to: 'Open' },
    ]);
    expect(await t.engine.processes.find(q.id)).toMatchObject({
      status: 'ACTIVE',
      state: { notes: ['poison pill'] },
    });
  });

  it("instance.command applies the process definition's own typed operator command", async () => {
    const i = await ticketAt('Review');
    const { applied } = await proveCommand(
      instanceCmd('instance.command', i, { command: 'Close', input: { resolution: 'fixed by hand' } }),
    );
    expect(applied.effects.transitions).toEqual([{ subject: `instance ${i.id}`, from: 'Review', to: 'Closed' }]);
    expect(applied.effects.outboxMessages).toEqual([{ type: 'TicketClosed', destination: 'reviews' }]);
    expect(await t.engine.processes.find(i.id)).toMatchObject({ status: 'COMPLETED', currentState: 'Closed' });
  });

  it('instance.force_transition moves the instance to a named state, keeping its data (admin only)', async () => {
    const i = await ticketAt('Open');
    expect(t.engine.repairs.catalogue['instance.force_transition']).toMatchObject({
      adminOnly: true,
      destructive: true,
    });
    await proveCommand(instanceCmd('instance.force_transition', i, { to: 'Review' }));
    expect(await t.engine.processes.find(i.id)).toMatchObject({ status: 'ACTIVE', currentState: 'Review' });
  });
});
