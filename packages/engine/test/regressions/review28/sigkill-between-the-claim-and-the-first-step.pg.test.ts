import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/index.ts';
import { childWorkerSuite } from '../../support/spawn-worker.ts';
import { stepHistory } from '../../support/step-history.ts';
import { waitFor } from '../../support/wait-for.ts';
import { assertRunGuarantees } from './support/invariants.ts';
import { killConfig, killFlow } from './support/kill-flow.ts';

const workerScript = fileURLToPath(new URL('./support/kill-worker.ts', import.meta.url));
const WAIT_MS = 60_000;

/**
 * Attack 3 with a real process: runs started by an engine with no pool are Pending; a child worker's
 * claim marks them Running (ADR 0100) and its replays stop in the flow's code before the first step
 * (the child prints `in-flow <run>`). The child is SIGKILLed there. The runs are never invisible (each
 * keeps its wake), and past the lease this process's pool replays them: one run.running, one outcome
 * per step, each action once.
 */
describe('a worker SIGKILLed between the claim that marked its run and the first step (PostgreSQL, real process)', () => {
  const suite = childWorkerSuite();

  it('the marked runs are reclaimed after the lease and finish with one outcome per step', async () => {
    const { db } = suite;
    const ranHere: string[] = [];
    const { flow, actions } = killFlow(async () => undefined, ranHere);
    const starter = createEngine({ db, flows: [flow], actions, config: killConfig, logger: pino({ level: 'silent' }) });
    const runIds = [(await starter.startFlow(flow, null)).runId, (await starter.startFlow(flow, null)).runId];
    const child = await suite.spawn(workerScript);
    await waitFor(
      () => `both runs in the child's flow code: ${child.output()}`,
      async () => (runIds.every((id) => child.output().includes(`in-flow ${id}`)) ? true : undefined),
      WAIT_MS,
    );
    for (const runId of runIds) {
      const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      expect(run.status).toBe('Running');
      expect(await stepHistory(db, runId)).toEqual(['run.started', 'run.running']);
      expect(await db.prisma.actionRun.count({ where: { run_id: runId } })).toBe(0);
      const jobs = await db.prisma.job.findMany({ where: { run_id: runId } });
      expect(jobs.map((j) => j.locked_by)).toContain(child.workerId);
    }
    expect(await child.kill()).toBe('SIGKILL');
    // Never invisible: each open run keeps a wake (leased by the dead worker, due again after the lease).
    for (const runId of runIds) await assertRunGuarantees(db, runId);

    const engine = suite.adopt(
      createEngine({ db, flows: [flow], actions, config: killConfig, logger: pino({ level: 'silent' }) }),
    );
    engine.startWorkers();
    await waitFor(
      'both runs to complete here',
      async () =>
        (await db.prisma.flowRun.count({ where: { id: { in: runIds }, status: 'Completed' } })) === 2
          ? true
          : undefined,
      WAIT_MS,
    );
    await engine.stopWorkers(2000);
    for (const runId of runIds) {
      expect(await stepHistory(db, runId)).toEqual([
        'run.started',
        'run.running',
        'action.started#1',
        'action.completed#1',
        'action.started#2',
        'action.completed#2',
        'run.completed',
      ]);
      await assertRunGuarantees(db, runId, { expectTerminal: true });
    }
    expect(ranHere.sort()).toEqual(['r28-kill-one', 'r28-kill-one', 'r28-kill-two', 'r28-kill-two']);
    expect(await db.prisma.job.count({ where: { run_id: { in: runIds } } })).toBe(0);
  }, 120_000);
});
