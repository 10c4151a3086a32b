import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import type { Engine } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { lateOutcomeTurnedAway } from '../../support/late-outcome.ts';
import {
  judgeSiblings,
  replayChild,
  runDueWakes,
  siblingParent,
  trackedDeps,
} from '../review23/support/sibling-children.ts';
import { anomaliesOf } from '../review24/support/late-flows.ts';
import { bareEngine } from '../harness.ts';
import { outageDeps, watchHolds } from './support/outage.ts';

/**
 * Review 27, attack 5 (a late compensation outcome; ADR 0093 decision 1, ADR 0010, ADR 0031). Review 23's
 * parent: `try { await Promise.all([ctx.child(A), ctx.child(B)]) } catch { await ctx.compensate(); throw }`
 * after a booking. A fails; B is open. Worker A's replay (R2) compensates: unbook is held at a gate (R2 may
 * park on B meanwhile). The database goes away for worker A; unbook ends; its outcome's write fails (late,
 * or through R2's abort) and goes to A's backlog. Worker B (another engine) then reclaims the compensation
 * (A's row says gone), runs unbook again and follows every wake. The database answers A again; its
 * backlog's write goes out.
 *
 * Guarantees: unbook's outcome is recorded once (attempt 2's), the late one journaled; unbook ran once per
 * recorded attempt (2); the parent ends once, Compensated, nothing after its end; no child left open.
 */
describe(`a late compensation outcome through an outage and a reclaim (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('unbook ends during the outage; B reclaims and runs it again', async () => {
    const s = siblingParent(db, { children: 2, firstFails: true });
    const a: Engine = bareEngine(db, {
      flows: [...s.e.runtime.registry.flows.values()],
      actions: [...s.e.runtime.registry.actions.values()],
      config: { worker: { outcome_retry: { max_attempts: 2, base_delay_ms: 1, max_delay_ms: 1 } } },
    });
    const b = s.e;
    await db.prisma.worker.create({ data: { id: a.runtime.workerId } });
    const holds = watchHolds(a.runtime);
    const runId = await s.start();
    const r1 = trackedDeps(db, a.runtime);
    expect(await executeRun(r1.deps, runId)).toBe('parked');
    await r1.quiet();
    expect(await replayChild(db, b, runId, s.seqs.A)).toBe('Failed');

    const unbook = s.holdAction('unbook');
    const outage = outageDeps(a.runtime);
    const r2 = trackedDeps(db, outage.deps);
    let r2Done: string | null = null;
    const live = executeRun(r2.deps, runId).then(
      (r) => (r2Done = r),
      () => (r2Done = 'aborted'),
    );
    await unbook.reached;
    await r2.quiet();
    const parkedFirst = r2Done === 'parked';
    outage.state.mode = 'fail';
    unbook.release();
    await live;
    await waitHeld(holds);
    const comp = await db.prisma.compensationRun.findFirstOrThrow({ where: { run_id: runId } });
    expect([comp.status, comp.attempts]).toEqual(['Running', 1]);

    await db.prisma.worker.update({ where: { id: a.runtime.workerId }, data: { stopped_at: new Date() } });
    const reclaimed = await b.reclaimStep(runId, { stepId: comp.id });
    await db.prisma.job.deleteMany({ where: { run_id: runId } });
    await executeRun(b.runtime, runId);
    await replayChild(db, b, runId, s.seqs.B);
    await runDueWakes(db, b, runId);

    outage.state.mode = 'up';
    await a.runtime.heldOutcomes.retry();
    const turnedAway = await lateOutcomeTurnedAway(db, runId);
    await runDueWakes(db, b, runId);
    const judged = await judgeSiblings(db, runId);
    const compAfter = await db.prisma.compensationRun.findFirstOrThrow({ where: { run_id: runId } });
    console.log(
      `review27 late compensation: R2 parked before unbook ended: ${parkedFirst}; anomalies ${JSON.stringify(await anomaliesOf(db, runId))}`,
    );
    expect({
      reclaimed,
      comp: [compAfter.status, compAfter.attempts],
      parent: [judged.parent.status, judged.parent.ends, judged.parent.afterTheEnd],
      compensations: judged.parent.compensations,
      unbookRan: s.ran.unbook,
      turnedAway: turnedAway.length,
      held: a.runtime.heldOutcomes.size,
      orphans: judged.orphans,
    }).toEqual({
      reclaimed: { reclaimed: true, stepId: comp.id },
      comp: ['Completed', 2],
      parent: ['Compensated', 1, []],
      compensations: [[expect.stringMatching(/-unbook$/), 'Completed', 2]],
      unbookRan: 2,
      turnedAway: 1,
      held: 0,
      orphans: [],
    });
  });
});

async function waitHeld(holds: ReturnType<typeof watchHolds>) {
  const { waitFor } = await import('../../support/wait-for.ts');
  await waitFor('the compensation outcome to reach the backlog', async () =>
    holds.seen.length > 0 ? true : undefined,
  );
}
