import { describe, expect, it } from 'vitest';
import { testDbKind } from '../support/test-database.ts';
import { changing, halfDone, holding, retrying, switches } from './support/repair-fixtures.ts';
import { useCatalogue } from './support/catalogue-harness.ts';

/** The run commands of the repair catalogue: kick, signal, cancel, terminate, expire, retry_step, complete_step, resume_from_step. How each command is proved: support/catalogue-harness.ts. */
describe(`run repairs (${testDbKind()})`, () => {
  const c = useCatalogue();
  const { who, parkedRun, waitingRun, runCmd, stepCmd, proveCommand } = c;

  it('run.kick sends a fresh job for the parked step', async () => {
    const d = await waitingRun();
    const { applied } = await proveCommand(runCmd('run.kick', d));
    expect(applied.effects.jobs).toHaveLength(1);
  });

  it('run.signal buffers the signal and wakes the run, which then completes with it', async () => {
    const { t } = c;
    const d = await waitingRun();
    await proveCommand(runCmd('run.signal', d, { signal: { name: 'go', payload: { approved: true } } }));
    const done = await t.drive(d.run.id, { skipTime: false });
    expect(done.run).toMatchObject({ status: 'Completed', output: { approved: true } });
  });

  it('run.cancel requests cancellation and lists the compensation it will start', async () => {
    const { t } = c;
    const d = await waitingRun();
    const { applied } = await proveCommand(runCmd('run.cancel', d, { cleanupSeconds: 600 }));
    expect(applied.effects.compensations).toEqual([{ actionSequence: 1, name: 'rep-undo-a' }]);
    const run = await t.db.prisma.flowRun.findUniqueOrThrow({ where: { id: d.run.id } });
    expect(run.cancel_reason).toBe(who.reason);
  });

  it('run.terminate closes the run as Terminated without compensation', async () => {
    const { t } = c;
    const d = await waitingRun();
    await proveCommand(runCmd('run.terminate', d));
    const after = await t.engine.getRun(d.run.id);
    expect(after?.run.status).toBe('Terminated');
    expect(after?.compensations).toEqual([]);
    expect(after?.run.safeRepairs).toEqual([]);
  });

  it('run.terminate states what it leaves undone: a completed step not compensated, a step in flight (ADR 0091)', async () => {
    const { t } = c;
    t.faults.crashAfterClaim('rep-held');
    const d = await parkedRun(halfDone, (x) => x.actions[1]?.status === 'Running');
    const { applied } = await proveCommand(runCmd('run.terminate', d));
    expect(applied.effects.notes).toEqual([
      'no compensation runs: what the run did stays done',
      'left undone: step 1 (rep-a) completed and is not compensated',
      'in flight: step 2 (rep-held) is running on a worker; whether it took effect will not be known',
    ]);
    const leftUndone = {
      source: 'record',
      steps: [{ sequence: 1, name: 'rep-a', compensation: null }],
      in_flight: [{ kind: 'action', sequence: 2, name: 'rep-held' }],
    };
    const after = await t.engine.getRun(d.run.id);
    expect(after?.run).toMatchObject({ status: 'Terminated', leftUndone });
    expect(after?.events.find((e) => e.type === 'run.terminated')?.data).toMatchObject({ left_undone: leftUndone });
  });

  it('a run terminated with nothing done and nothing in flight states an empty list', async () => {
    const { t } = c;
    switches.flakyFails = true; // its one step fails and waits an hour for its retry: neither done nor in flight
    const d = await parkedRun(retrying, (x) => x.actions[0]?.status === 'Failed' && x.run.status === 'Waiting');
    await t.engine.terminate(d.run.id, { reason: 'not wanted' });
    const after = await t.engine.getRun(d.run.id);
    expect(after?.run.leftUndone).toEqual({ source: 'record', steps: [] });
  });

  it('run.expire expires the run now and starts its rollback', async () => {
    const { t } = c;
    const d = await waitingRun();
    const { applied } = await proveCommand(runCmd('run.expire', d, { cleanupSeconds: 600 }));
    expect(applied.effects.compensations).toEqual([{ actionSequence: 1, name: 'rep-undo-a' }]);
    const done = await t.drive(d.run.id, { skipTime: false });
    expect(done.run.status).toBe('Expired');
    expect(done.compensations.map((c) => [c.name, c.status])).toEqual([['rep-undo-a', 'Completed']]);
  });

  it('run.retry_step makes a Failed step due now instead of an hour later', async () => {
    const { t } = c;
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
    const { t } = c;
    t.faults.crashAfterClaim('rep-held');
    const d = await parkedRun(holding, (x) => x.actions[0]?.status === 'Running');
    const { applied } = await proveCommand(stepCmd('run.complete_step', d, 1, { output: { from: 'operator' } }));
    expect(applied.effects.transitions).toEqual([{ subject: 'step 1 (rep-held)', from: 'Running', to: 'Completed' }]);
    const done = await t.drive(d.run.id, { skipTime: false });
    expect(done.run).toMatchObject({ status: 'Completed', output: { from: 'operator' } });
  });

  it('run.resume_from_step re-runs a replay-blocked run from the step that no longer matches', async () => {
    const { t } = c;
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
});
