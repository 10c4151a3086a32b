import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/index.ts';
import { childWorkerSuite } from '../../support/spawn-worker.ts';
import { waitFor } from '../../support/wait-for.ts';
import { oneSlotFusedSigkillConfig, fusedSigkillFlow } from './support/fused-sigkill-flow.ts';

const workerScript = fileURLToPath(new URL('./support/fused-sigkill-worker.ts', import.meta.url));
/** Progress-driven waits: each fails only when its condition has not come in this long (a loaded 2-core machine). */
const WAIT_MS = 30_000;

/**
 * Issue 11 and ADR 0042 with a real process: a child worker runs a 3-step flow whose steps go back to
 * back, each claimed by the one statement that records the step before. Once the statement after
 * step 1 committed (step 1 Completed, step 2 inserted Running under the child, with its reclaim
 * deadline), the child is SIGKILLed in step 2. Past its job's lease and the step's reclaim deadline,
 * this process's worker takes the run, reclaims step 2 and finishes the run: one outcome per step,
 * step 1 never run again.
 */
describe('a worker SIGKILLed between two fused step transitions (real PostgreSQL, real process)', () => {
  const suite = childWorkerSuite();

  it('the run is reclaimed and finishes with one outcome per step', async () => {
    const { db } = suite;
    const child = await suite.spawn(workerScript);
    const ranHere: string[] = [];
    const { flow, actions } = fusedSigkillFlow(async () => 'middle', ranHere);
    const engine = suite.adopt(
      createEngine({
        db,
        flows: [flow],
        actions,
        config: oneSlotFusedSigkillConfig,
        logger: pino({ level: 'silent' }),
      }),
    );
    const { runId } = await engine.startFlow(flow, null);

    const held = await waitFor(
      'the child to record step 1 and hold step 2',
      async () => {
        const steps = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
        const [first, middle] = steps;
        return first?.status === 'Completed' && middle?.status === 'Running' && middle.claimed_by === child.workerId
          ? middle
          : undefined;
      },
      WAIT_MS,
    );
    // Inserted already claimed by the fused statement: attempt 1, its reclaim deadline from its window.
    expect(held.attempts).toBe(1);
    expect(held.reclaim_stale_at?.getTime()).toBe(held.started_at!.getTime() + 1_000);

    expect(await child.kill()).toBe('SIGKILL');

    engine.startWorkers();
    const done = await waitFor(
      'the run to complete here',
      async () => {
        const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
        return r.status === 'Completed' ? r : undefined;
      },
      WAIT_MS,
    );
    await engine.stopWorkers(2000);

    const steps = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    const history = await db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });
    const completions = history.filter((e) => e.type === 'action.completed').map((e) => e.sequence);
    expect({
      output: done.output,
      steps: steps.map((s) => [s.sequence, s.status, s.attempts, s.claimed_by === child.workerId]),
      completions,
      ranHere,
      last: history.at(-1)?.type,
    }).toEqual({
      output: ['first', 'middle', 'third'],
      steps: [
        [1, 'Completed', 1, true],
        [2, 'Completed', 2, false],
        [3, 'Completed', 1, false],
      ],
      completions: [1, 2, 3],
      ranHere: ['fused-kill-middle', 'fused-kill-third'],
      last: 'run.completed',
    });
  }, 90_000);
});
