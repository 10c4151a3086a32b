import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { enqueueJob } from '../../../src/store/enqueue-job.ts';
import { childWorkerSuite } from '../../support/spawn-worker.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine } from '../harness.ts';
import { recordOf } from '../review20/record.ts';
import { childrenOf } from '../review23/support/sibling-children.ts';
import { endKillFlows } from './support/end-kill-flows.ts';

const workerScript = fileURLToPath(new URL('./support/end-kill-worker.ts', import.meta.url));

/**
 * Review 24 (ADR 0093, decision 3), a real worker process on PostgreSQL. `Promise.all([ctx.child(A),
 * ctx.action(side)])` after a booking: A's action hangs in the worker (A stays open); `side` fails for good
 * once the test says so. The parent's next replay (the worker's, woken by the test) ends it Failed, and its
 * end requests A's cancellation. The worker is SIGKILLed as soon as the parent's end is seen committed. This
 * process then recovers: the dead worker counts as gone, A's step (Running under it) is reclaimed, and A is
 * replayed.
 *
 * Guarantees: the parent ends exactly once (Failed) and nothing follows its end; A had its cancellation
 * requested by that end and is listed in children_cancelled; A ends exactly once, nothing after its end (its
 * reclaimed in-flight step may finish it Completed: cancellation is delivered at the next step); A's action runs
 * here at most once (the reclaim).
 */
describe("SIGKILL right after a parent's end that cancels its open child (real PostgreSQL, real process)", () => {
  const suite = childWorkerSuite();

  it('the worker dies once the end committed; the child is cancelled once', async () => {
    const { db } = suite;
    const child = await suite.spawn(workerScript);

    const ranHere: string[] = [];
    const flows = endKillFlows(
      (name) => ranHere.push(name),
      () => Promise.resolve(),
      () => Promise.resolve(),
    );
    const e = bareEngine(db, { flows: flows.flows, actions: flows.actions });
    const { runId } = await e.startFlow(flows.parent, null);
    // The worker's first replay started A and parked on it; A's action hangs; `side` waits.
    await child.printed(/^ran side$/m);
    await child.printed(/^ran work-a$/m);
    const a = await waitFor('A to exist', async () => (await childrenOf(db, runId))[0]);
    child.say();
    await waitFor('side to be recorded Errored', async () =>
      (await db.prisma.actionRun.findFirst({ where: { run_id: runId, sequence: 3, status: 'Errored' } }))
        ? true
        : undefined,
    );
    // A late failure of a parked replay comes with no wake (see a-late-failure-after-a-newer-replay-parked-on-it):
    // the test wakes the parent itself, and the worker's replay ends it.
    await enqueueJob(db.prisma, { kind: 'wake-run', runId, availableAt: new Date(0) });
    await waitFor('the parent to end', async () =>
      (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).finished_at ? true : undefined,
    );
    await child.kill();

    // Recovery here: the dead worker counts as gone; A's step held by it is reclaimed; A's wakes are followed.
    await db.prisma.worker.update({ where: { id: child.workerId }, data: { stopped_at: new Date() } });
    const aStep = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: a.id, sequence: 1 } });
    await db.prisma.job.deleteMany({ where: { run_id: { in: [runId, a.id] } } });
    expect(await e.reclaimStep(a.id, { stepId: aStep.id })).toEqual({ reclaimed: true, stepId: aStep.id });
    for (let i = 0; i < 4; i++) {
      await db.prisma.job.deleteMany({ where: { run_id: { in: [runId, a.id] } } });
      await executeRun(e.runtime, a.id);
      await executeRun(e.runtime, runId);
    }

    const parent = await recordOf(db, runId);
    const kid = await recordOf(db, a.id);
    const aRow = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: a.id } });
    const end = await db.prisma.flowEvent.findFirstOrThrow({ where: { run_id: runId, type: 'run.failed' } });
    expect({
      parent: [parent.run.status, parent.ends, parent.afterTheEnd],
      childrenCancelled: (end.data as { children_cancelled?: string[] }).children_cancelled ?? [],
      a: [kid.run.open, kid.ends, kid.afterTheEnd, aRow.cancel_requested_at !== null],
      aSteps: kid.steps.map(([seq, , status]) => [seq, kid.run.status === 'Completed' ? status : 'any']),
      // The reclaimed step is A's in-flight attempt run again (attempt 2), once; cancellation is cooperative,
      // delivered at A's next step, and A has none after it: A may end Completed (or Cancelled, unrun).
      ranHere: kid.run.status === 'Completed' ? ['work-a'] : [],
      status: ['Completed', 'Cancelled'].includes(kid.run.status),
    }).toEqual({
      parent: ['Failed', 1, []],
      childrenCancelled: [a.id],
      a: [false, 1, [], true],
      aSteps: [[1, kid.run.status === 'Completed' ? 'Completed' : 'any']],
      ranHere,
      status: true,
    });
  });
});
