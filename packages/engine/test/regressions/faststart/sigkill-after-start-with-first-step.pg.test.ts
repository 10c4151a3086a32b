import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/index.ts';
import { childWorkerSuite } from '../../support/spawn-worker.ts';
import { waitFor } from '../../support/wait-for.ts';
import { firstStepSigkillConfig, firstStepSigkillFlow } from './support/first-step-sigkill-flow.ts';

const workerScript = fileURLToPath(new URL('./support/first-step-sigkill-worker.ts', import.meta.url));
/** Progress-driven waits: each fails only when its condition has not come in this long (a loaded 2-core machine). */
const WAIT_MS = 30_000;

/**
 * ADR 0048 with a real process: a child worker starts a 3-step flow in its own pool, so ONE statement
 * writes the run and its first step, claimed by the child (Running, attempt 1, its reclaim deadline).
 * The child is SIGKILLed in that step. Past its job's lease and the step's reclaim deadline, this
 * process's worker takes the run, reclaims step 1 and finishes the run: one outcome per step.
 */
describe('a worker SIGKILLed right after its start wrote the first step (real PostgreSQL, real process)', () => {
  const suite = childWorkerSuite();

  it('the run is reclaimed and finishes with one outcome per step', async () => {
    const { db } = suite;
    const child = await suite.spawn(workerScript);
    const [, runId, statement] = /^start (\S+) (.*)$/m.exec(child.output()) ?? [];
    if (!runId) throw new Error(`the child did not say which run it started: ${child.output()}`);
    // The start and the first step's claim were one statement.
    expect(statement).toBe('/* sagaflow: start with first step */');
    const held = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId } });
    expect([held.sequence, held.status, held.attempts, held.claimed_by]).toEqual([1, 'Running', 1, child.workerId]);
    expect(held.reclaim_stale_at?.getTime()).toBe(held.started_at!.getTime() + 1_000);

    expect(await child.kill()).toBe('SIGKILL');

    const ranHere: string[] = [];
    const { flow, actions } = firstStepSigkillFlow(async () => 'first', ranHere);
    const engine = suite.adopt(
      createEngine({
        db,
        flows: [flow],
        actions,
        config: firstStepSigkillConfig,
        logger: pino({ level: 'silent' }),
      }),
    );
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
    expect({
      output: done.output,
      steps: steps.map((s) => [s.sequence, s.status, s.attempts]),
      history: history.map((e) => (e.sequence === null ? e.type : `${e.type}#${e.sequence}`)),
      ranHere,
    }).toEqual({
      output: ['first', 'second', 'third'],
      steps: [
        [1, 'Completed', 2],
        [2, 'Completed', 1],
        [3, 'Completed', 1],
      ],
      history: [
        'run.started',
        'run.running',
        'action.started#1',
        'action.started#1',
        'action.completed#1',
        'action.started#2',
        'action.completed#2',
        'action.started#3',
        'action.completed#3',
        'run.completed',
      ],
      ranHere: ['faststart-kill-first', 'faststart-kill-second', 'faststart-kill-third'],
    });
  }, 90_000);
});
