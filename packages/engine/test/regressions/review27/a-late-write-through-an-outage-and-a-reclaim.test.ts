import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import type { Engine } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { judgeSiblings, replayChild, runDueWakes, trackedDeps } from '../review23/support/sibling-children.ts';
import { anomaliesOf, lateParent } from '../review24/support/late-flows.ts';
import { drivenOn } from '../review20/record.ts';
import { bareEngine } from '../harness.ts';
import { outageDeps, watchHolds } from './support/outage.ts';

type Reclaim = 'reclaimStep' | 'deadline';

/**
 * Review 27, attacks 1 and 2 (ADR 0093/0094's open point, ADR 0010). Worker A (its own engine) replays the
 * parent `Promise.all([ctx.child(A), ctx.action(side)])` and parks on A while `side` runs (attempt 1, held
 * at a gate). The database goes away for worker A and `side` ends: its late write (the flush has run)
 * either spends its retry budget and goes to A's backlog, or hangs in flight on a connection that does not
 * answer. Meanwhile worker B (a second engine on the same database) reclaims the step — by the operator's
 * reclaimStep (A's row in `workers` says gone) or because its reclaim deadline passed on the business
 * clock — runs `side` again (attempt 2) and records it. Then the database answers A again, and A's late
 * write goes out.
 *
 * Guarantees: the step's outcome is recorded once (attempt 2's); attempt 1's meets its fence and is
 * journaled (outcome_rejected); `side` ran once per recorded attempt (2); the parent ends once, with
 * nothing after its end. With the outage ending before the reclaim (attack 2), the late write lands, the
 * reclaim finds nothing to redo, and `side` runs once.
 */
describe(`a late write through an outage and a reclaim of its step (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const setup = (reclaim: Reclaim, sideEnds: 'completes' | 'fails-then-retries' = 'completes') => {
    const s = lateParent(db, { shape: 'child+step', sideEnds });
    const reclaimConfig = reclaim === 'deadline' ? { reclaim: { actions: { enabled: true, after_seconds: 60 } } } : {};
    const engineLike = (attempts: number): Engine =>
      bareEngine(db, {
        clock: s.clock,
        flows: [...s.e.runtime.registry.flows.values()],
        actions: [...s.e.runtime.registry.actions.values()],
        config: {
          ...reclaimConfig,
          worker: { outcome_retry: { max_attempts: attempts, base_delay_ms: 1, max_delay_ms: 1 } },
        },
        faults: s.e.runtime.faults,
      });
    // Worker A: a short retry budget, so a late write that keeps failing reaches its backlog.
    const a = engineLike(2);
    // Worker B: another engine (another worker id) on the same database.
    const b = reclaim === 'deadline' ? engineLike(20) : s.e;
    return { s, a, b };
  };

  async function parkWithSideRunning(s: ReturnType<typeof lateParent>, a: Engine) {
    const runId = await s.start();
    const side = s.holdAction('side');
    const outage = outageDeps(a.runtime);
    const r1 = trackedDeps(db, outage.deps);
    const live = executeRun(r1.deps, runId);
    await side.reached;
    expect(await live).toBe('parked');
    await r1.quiet();
    const row = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 3 } });
    expect([row.status, row.attempts, row.claimed_by]).toEqual(['Running', 1, a.runtime.workerId]);
    return { runId, side, outage, row };
  }

  async function workerGone(workerId: string) {
    await db.prisma.worker.upsert({
      where: { id: workerId },
      create: { id: workerId, stopped_at: new Date() },
      update: { stopped_at: new Date() },
    });
  }

  for (const reclaim of ['reclaimStep', 'deadline'] as const)
    for (const late of ['in-the-backlog', 'in-flight'] as const)
      for (const sideEnds of ['completes', 'fails-then-retries'] as const)
        it(`attack 1: ${reclaim}, A's late write (${sideEnds}) ${late} while B runs the step again`, async () => {
          const { s, a, b } = setup(reclaim, sideEnds);
          const holds = watchHolds(a.runtime);
          const { runId, side, outage, row } = await parkWithSideRunning(s, a);

          // The outage, for worker A. `side` (attempt 1) ends in R1, which has parked.
          outage.state.mode = late === 'in-the-backlog' ? 'fail' : 'hang';
          side.release();
          if (late === 'in-the-backlog') await holds.heldFor(3);
          else await outage.hung;

          // B takes the step over.
          if (reclaim === 'reclaimStep') {
            await workerGone(a.runtime.workerId);
            expect(await b.reclaimStep(runId, { stepId: row.id })).toEqual({ reclaimed: true, stepId: row.id });
          } else {
            s.clock.advance(61_000);
          }
          await db.prisma.job.deleteMany({ where: { run_id: runId } });
          const r2 = trackedDeps(db, b.runtime);
          expect(await executeRun(r2.deps, runId)).toBe('parked');
          await r2.quiet();
          const afterB = await db.prisma.actionRun.findUniqueOrThrow({ where: { id: row.id } });

          // The database answers A again: its late write goes out (the backlog's next poll, or the hung
          // connection answering).
          if (late === 'in-the-backlog') {
            outage.state.mode = 'up';
            await a.runtime.heldOutcomes.retry();
          } else {
            outage.resume();
          }
          const anomalies = await (async () => {
            const { lateOutcomeTurnedAway } = await import('../../support/late-outcome.ts');
            return lateOutcomeTurnedAway(db, runId);
          })();
          const afterLate = await db.prisma.actionRun.findUniqueOrThrow({ where: { id: row.id } });

          expect(await replayChild(db, b, runId, 2)).toBe('Completed');
          await runDueWakes(db, b, runId);
          const judged = await judgeSiblings(db, runId);
          expect({
            afterB: [afterB.status, afterB.attempts, afterB.claimed_by],
            afterLate: [afterLate.status, afterLate.attempts, afterLate.output],
            turnedAway: anomalies,
            held: a.runtime.heldOutcomes.size,
            parent: [judged.parent.status, judged.parent.ends, judged.parent.afterTheEnd],
            duplicates: judged.parent.duplicateStepOutcomes,
            ranSide: s.ran.side,
            anomalies: (await anomaliesOf(db, runId)).filter((x) => !x.startsWith('claim_lost#')),
          }).toEqual({
            afterB: ['Completed', 2, b.runtime.workerId],
            afterLate: ['Completed', 2, 'side:null'],
            turnedAway: ['outcome_rejected'],
            held: 0,
            parent: ['Completed', 1, []],
            duplicates: [],
            ranSide: 2,
            anomalies: ['outcome_rejected#3'],
          });
        });

  for (const reclaim of ['reclaimStep', 'deadline'] as const)
    it(`attack 2: ${reclaim}, the outage ends and A's late write lands before B looks`, async () => {
      const { s, a, b } = setup(reclaim);
      const holds = watchHolds(a.runtime);
      const { runId, side, outage, row } = await parkWithSideRunning(s, a);

      outage.state.mode = 'fail';
      side.release();
      await holds.heldFor(3);
      // The database answers before anyone reclaims: the backlog writes attempt 1.
      outage.state.mode = 'up';
      await a.runtime.heldOutcomes.retry();
      const landed = await db.prisma.actionRun.findUniqueOrThrow({ where: { id: row.id } });

      // B comes to reclaim: there is nothing to redo.
      let reclaimed: unknown = null;
      if (reclaim === 'reclaimStep') {
        await workerGone(a.runtime.workerId);
        reclaimed = await b.reclaimStep(runId, { stepId: row.id });
      } else {
        s.clock.advance(61_000);
      }
      await db.prisma.job.deleteMany({ where: { run_id: runId } });
      await executeRun(b.runtime, runId);
      expect(await replayChild(db, b, runId, 2)).toBe('Completed');
      await runDueWakes(db, b, runId);
      const judged = await judgeSiblings(db, runId);
      expect({
        landed: [landed.status, landed.attempts],
        reclaimed: reclaim === 'reclaimStep' ? (reclaimed as { reclaimed: boolean }).reclaimed : false,
        parent: [judged.parent.status, judged.parent.ends, judged.parent.afterTheEnd],
        duplicates: judged.parent.duplicateStepOutcomes,
        ranSide: s.ran.side,
        drivenOn: await drivenOn(db, b, runId),
        anomalies: (await anomaliesOf(db, runId)).filter((x) => !x.startsWith('claim_lost#')),
      }).toEqual({
        landed: ['Completed', 1],
        reclaimed: false,
        parent: ['Completed', 1, []],
        duplicates: [],
        ranSide: 1,
        drivenOn: true,
        anomalies: [],
      });
    });

  for (const reclaim of ['reclaimStep', 'deadline'] as const)
    it(`attack 2: ${reclaim}, A's late write lands while B's reclaiming claim is on its way`, async () => {
      const { s, a, b } = setup(reclaim);
      const holds = watchHolds(a.runtime);
      const { runId, side, outage, row } = await parkWithSideRunning(s, a);

      outage.state.mode = 'fail';
      side.release();
      await holds.heldFor(3);
      // B takes the step over: the row is open to the claim (reclaimStep) or past its deadline, and B's
      // replay has decided to claim it; its claim waits at a gate before its transaction.
      let reclaimed: unknown = null;
      if (reclaim === 'reclaimStep') {
        await workerGone(a.runtime.workerId);
        reclaimed = await b.reclaimStep(runId, { stepId: row.id });
      } else s.clock.advance(61_000);
      await db.prisma.job.deleteMany({ where: { run_id: runId } });
      const claim = s.holdClaim('side');
      const r2 = trackedDeps(db, b.runtime);
      const live2 = executeRun(r2.deps, runId);
      await claim.reached;
      // Now the database answers A, and its late write goes out first.
      outage.state.mode = 'up';
      await a.runtime.heldOutcomes.retry();
      const landed = await db.prisma.actionRun.findUniqueOrThrow({ where: { id: row.id } });
      claim.release();
      await live2;
      await r2.quiet();

      expect(await replayChild(db, b, runId, 2)).toBe('Completed');
      await runDueWakes(db, b, runId);
      const judged = await judgeSiblings(db, runId);
      const final = await db.prisma.actionRun.findUniqueOrThrow({ where: { id: row.id } });
      expect({
        reclaimed: reclaim === 'reclaimStep' ? (reclaimed as { reclaimed: boolean }).reclaimed : true,
        landed: [landed.status, landed.attempts],
        final: [final.status, final.attempts, final.output],
        parent: [judged.parent.status, judged.parent.ends, judged.parent.afterTheEnd],
        duplicates: judged.parent.duplicateStepOutcomes,
        ranSide: s.ran.side,
        drivenOn: await drivenOn(db, b, runId),
        turnedAway: (await anomaliesOf(db, runId)).filter((x) => !x.startsWith('claim_lost#')),
      }).toEqual({
        reclaimed: true,
        landed: ['Completed', 1],
        final: ['Completed', 1, 'side:null'],
        parent: ['Completed', 1, []],
        duplicates: [],
        ranSide: 1,
        drivenOn: true,
        turnedAway: [],
      });
    });
});
