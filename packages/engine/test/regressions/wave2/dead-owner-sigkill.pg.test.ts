import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../../src/index.ts';
import { childWorkerSuite } from '../../support/spawn-worker.ts';
import { waitFor } from '../../support/wait-for.ts';
import { sigkillConfig, sigkillFlow } from './support/sigkill-flow.ts';

const workerScript = fileURLToPath(new URL('./support/sigkill-worker.ts', import.meta.url));
/** Progress-driven waits: each fails only when its condition has not come in this long (a loaded 2-core machine). */
const WAIT_MS = 25_000;

/**
 * Issue 13, item 2 (b), with a real process (ADR 0010): a child Node process runs an engine whose
 * charge step never returns; once its step is Running under the child's worker id, the child is
 * SIGKILLed (no clean stop: its `workers` row is never marked stopped, its heartbeats just end). The
 * monitor in this process must give the run an `owner_gone` stuck reason naming that worker, with
 * `run.stuck` in its history; a kick from here reclaims the step, this process's worker runs it,
 * and the run completes with one outcome for the step and `run.unstuck` in its history.
 */
describe('wave 2: a step held by a SIGKILLed worker process is stuck with a reason and a kick repairs it (real PostgreSQL, real process)', () => {
  const suite = childWorkerSuite();

  it('SIGKILL mid-step: owner_gone and run.stuck, then kick; the run completes, the step has one outcome, run.unstuck is in the history', async () => {
    const { db } = suite;
    const child = await suite.spawn(workerScript);
    const { flow, actions } = sigkillFlow(async () => ({ by: 'test-process' }));
    const engine = suite.adopt(
      createEngine({ db, flows: [flow], actions, config: sigkillConfig, logger: pino({ level: 'silent' }) }),
    );
    const completed: { name: string; attempt: number }[] = [];
    engine.events.on('action.completed', (e) => void completed.push({ name: e.name, attempt: e.attempt }));
    const { runId } = await engine.startFlow(flow, null);

    const held = await waitFor(
      'the child to hold the charge step',
      async () => {
        const s = await db.prisma.actionRun.findFirst({ where: { run_id: runId, name: 'sigkill-charge' } });
        return s?.status === 'Running' && s.claimed_by === child.workerId ? s : undefined;
      },
      WAIT_MS,
    );
    expect(held.reclaim_stale_at).toBeNull(); // reclaim is off: nothing but the owner's liveness can free it

    expect(await child.kill()).toBe('SIGKILL');
    // Killed, not stopped: the worker row still says it never stopped; only its silent heartbeat tells.
    const row = await db.prisma.worker.findUniqueOrThrow({ where: { id: child.workerId } });
    expect(row.stopped_at).toBeNull();

    engine.startMonitor({ intervalMs: 100 });
    const reason = await waitFor(
      'the monitor to say the charge step is held by a gone worker',
      async () => {
        const r = (await engine?.getRun(runId))?.run.stuckReason;
        return r?.startsWith('owner_gone') ? r : undefined;
      },
      WAIT_MS,
    );
    expect(reason).toContain(`step 1 (sigkill-charge) held by worker ${child.workerId} which is gone since `);
    const stuck = await db.prisma.flowEvent.findMany({ where: { run_id: runId, type: 'run.stuck' } });
    expect(stuck.map((e) => (e.data as { reason: string }).reason)).toEqual([reason]);

    // The operator's kick (the repair the console offers for owner_gone) previews as applicable,
    // reclaiming the step first, and writes nothing.
    const status = (await engine.getRun(runId))?.run.status ?? '';
    const preview = await engine.repairs.preview({
      kind: 'run.kick',
      target: { runId },
      expected: { runStatus: status },
      actor: 'sigkill-test',
      reason: 'the worker holding the step was killed',
      idempotencyKey: `sigkill-${runId}`,
    } as Parameters<Engine['repairs']['preview']>[0]);
    expect(preview).toMatchObject({ expectedHolds: true, applicable: true, blockers: [] });
    expect(preview.effects.history).toEqual(['step.reclaimed', 'run.kicked']);

    expect(await engine.kick(runId)).toEqual({ kicked: true });
    engine.startWorkers();
    const done = await waitFor(
      'the run to complete',
      async () => {
        const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
        return r.status === 'Completed' ? r : undefined;
      },
      WAIT_MS,
    );
    await engine.stopMonitor();
    await engine.stopWorkers(2000);

    const charge = await db.prisma.actionRun.findMany({ where: { run_id: runId, name: 'sigkill-charge' } });
    const history = await db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });
    const types = history.map((e) => e.type);
    expect({
      run: [done.status, done.output, done.stuck_reason],
      charge: charge.map((s) => [s.status, s.attempts, s.output, s.claimed_by === child.workerId]),
      completedHere: completed.filter((e) => e.name === 'sigkill-charge'),
    }).toEqual({
      run: ['Completed', { by: 'test-process' }, null],
      charge: [['Completed', 2, { by: 'test-process' }, false]],
      completedHere: [{ name: 'sigkill-charge', attempt: 2 }],
    });
    const order = ['run.stuck', 'step.reclaimed', 'run.unstuck', 'run.completed'].map((t) => types.indexOf(t));
    expect(
      order.every((i, n) => i >= 0 && (n === 0 || i > (order[n - 1] ?? -1))),
      types.join(', '),
    ).toBe(true);
  }, 60_000);
});
