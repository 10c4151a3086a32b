import { describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { testDbKind } from '../../support/test-database.ts';
import { gate } from '../harness.ts';
import { finished, useEngineWithPool } from './use-engine-with-pool.ts';

/**
 * ADR 0048's stopped-pool path: a start reserves a slot, its pool stops before the start writes, and
 * the start still writes step 1 claimed by this worker at attempt 1. The stopped pool must not run
 * it; the start opens the step to the next claim (releaseFirstStep) and the wake goes back to the
 * queue, so the next pool claims it at attempt 2, which fences attempt 1 off. The action runs exactly
 * once, its outcome is recorded once, and the step's history says which attempt ran it.
 */
let ran = 0;
const once = defineAction({
  name: 'review10-released-step',
  run: async () => {
    ran += 1;
    return 'ran';
  },
});
const inCheck = gate();
const checkGate = gate();
const gated = defineFlow({
  name: 'review10-released',
  version: 1,
  // The input check waits for the test: the pool is stopped between the start's reserve and its write.
  input: {
    '~standard': {
      version: 1,
      vendor: 'sagaflow-test',
      validate: async (v: unknown) => {
        inCheck.open();
        await checkGate.promise;
        return { value: v as number };
      },
    },
  },
  run: async (ctx, n: number) => ctx.action(once, n),
});

describe(`a fused start whose pool stopped before it wrote (${testDbKind()})`, () => {
  const pool = useEngineWithPool();

  it('runs step 1 once, on the next pool, at attempt 2; the stopped pool never runs it', async () => {
    const { engine } = await pool.start({
      flows: [gated],
      actions: [once],
      config: { worker: { lease_seconds: 3600 } },
    });
    const db = pool.db();
    const started = engine.startFlow(gated, 7);
    await inCheck.promise;
    // The pool kept a slot for the start (ADR 0029): the case under test, not a start through the queue.
    expect(engine.workerCounters()?.handOffs).toBe(1);
    expect((await engine.stopWorkers(2_000)).drained).toBe(true);
    engine.startWorkers();
    checkGate.open();
    const { runId } = await started;
    const run = await finished(db, runId);
    expect([run.status, run.output]).toEqual(['Completed', 'ran']);
    expect(ran).toBe(1);
    const steps = await db.prisma.actionRun.findMany({ where: { run_id: runId } });
    expect(steps.map((s) => [s.sequence, s.status, s.attempts, s.output])).toEqual([[1, 'Completed', 2, 'ran']]);
    const events = await db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } });
    // The start's claim (attempt 1, never run), the next pool's (attempt 2), one outcome.
    expect(events.map((e) => [e.type, (e.data as { attempt?: number } | null)?.attempt ?? null])).toEqual([
      ['run.started', null],
      ['run.running', null],
      ['action.started', 1],
      ['action.started', 2],
      ['action.completed', 2],
      ['run.completed', null],
    ]);
  });
});
