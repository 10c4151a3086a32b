import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/index.ts';
import { childWorkerSuite } from '../../support/spawn-worker.ts';
import { waitFor } from '../../support/wait-for.ts';
import { fusedSigkillConfig } from '../fused-steps/support/fused-sigkill-flow.ts';
import { burstKillFlow } from './support/burst-kill-flow.ts';

const workerScript = fileURLToPath(new URL('./support/burst-kill-worker.ts', import.meta.url));
/** Progress-driven waits: each fails only when its condition has not come in this long (a loaded 2-core machine). */
const WAIT_MS = 40_000;

/**
 * ADR 0063 with a real process: a child worker starts runs in bursts of eight, so start statements go
 * out beside each other (and beside its claims, transitions and finishes), and is SIGKILLed once
 * some of its starts have committed. Whatever it committed must be finished here exactly once per
 * step (a run written with its first step claimed by the dead worker is reclaimed), nothing it did
 * not commit may show, and no run may be left open or stuck.
 */
describe('a worker SIGKILLed in the middle of bursts of starts (real PostgreSQL, real process)', () => {
  const suite = childWorkerSuite();

  it('every run it committed completes here, each step recorded once', async () => {
    const { db } = suite;
    const child = await suite.spawn(workerScript);
    const runCount = () => db.prisma.flowRun.count();
    await waitFor('some of its starts to commit', async () => ((await runCount()) >= 12 ? true : undefined), WAIT_MS);
    expect(await child.kill()).toBe('SIGKILL');

    const { flow, actions } = burstKillFlow(async (n) => n);
    const engine = suite.adopt(
      createEngine({
        db,
        flows: [flow],
        actions,
        config: fusedSigkillConfig,
        logger: pino({ level: 'silent' }),
      }),
    );
    engine.startWorkers();
    await waitFor(
      'every run to end',
      async () =>
        (await db.prisma.flowRun.count({ where: { status: { in: ['Pending', 'Running', 'Waiting'] } } })) === 0
          ? true
          : undefined,
      WAIT_MS,
    );
    await engine.stopWorkers(2000);

    const runs = await db.prisma.flowRun.findMany();
    expect(runs.length).toBeGreaterThanOrEqual(12);
    const problems: string[] = [];
    for (const run of runs) {
      const n = (run.input as number) ?? -1;
      const steps = await db.prisma.actionRun.findMany({ where: { run_id: run.id }, orderBy: { sequence: 'asc' } });
      const events = await db.prisma.flowEvent.findMany({ where: { run_id: run.id }, orderBy: { id: 'asc' } });
      const types = events.map((e) => e.type);
      const outcomes = (rowId: string) =>
        events.filter((e) => e.row_id === rowId && e.type === 'action.completed').length;
      const ok =
        run.status === 'Completed' &&
        run.stuck_reason === null &&
        JSON.stringify(run.output) === JSON.stringify([n, n * 10]) &&
        steps.length === 2 &&
        steps.every((s) => s.status === 'Completed' && outcomes(s.id) === 1) &&
        types.filter((t) => t === 'run.completed').length === 1 &&
        types.at(-1) === 'run.completed';
      if (!ok)
        problems.push(
          `${n} ${run.status} ${run.stuck_reason ?? ''} ${JSON.stringify(steps.map((s) => [s.sequence, s.status, s.attempts]))} ${types.join(',')}`,
        );
    }
    expect(problems).toEqual([]);
    // Not vacuous: steps the dead worker held were taken back and run again here.
    const retaken = await db.prisma.actionRun.count({ where: { sequence: 1, attempts: { gte: 2 } } });
    expect(retaken).toBeGreaterThan(0);
    expect(await db.prisma.job.count()).toBe(0);
    // Each input at most once: no start was written twice.
    const inputs = runs.map((r) => r.input as number);
    expect(new Set(inputs).size).toBe(inputs.length);
  }, 120_000);
});
