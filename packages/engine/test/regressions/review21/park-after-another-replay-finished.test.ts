import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, type Engine } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { recordOf } from '../review20/record.ts';

/**
 * Review 21. The park change of ebae558 (execute-run.ts `park()`): a replay whose park does not land
 * queues its wake only while the run is open. Replay A (worker A) holds both branches of a
 * ctx.parallel; branch x completes and is written alone (A has recorded an outcome). Worker A then
 * looks gone, the operator reclaims branch y, and replay B (worker B) runs y's attempt 2. A's attempt 1
 * of y returns late and is turned away; A then reaches the step after the round and parks.
 *
 * (a) B finished the run before A parks: A's park finds the run closed. Designed: no wake is queued
 *     for the finished run (no job left for it at all), the run ends once, Completed.
 * (b) B holds the step after the round (running) when A parks: A's park does not land (B wrote the
 *     run since A loaded it) and A has recorded an outcome, so A queues a wake while the run is open;
 *     then B finishes the run. Designed: the run is never left open without a job, and any wake left
 *     over for the finished run changes nothing when a worker takes it.
 */
describe(`a replay parks after another replay moved or finished the run (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  for (const order of ['a', 'b'] as const)
    it(`(${order}) ${order === 'a' ? 'B finished the run first' : 'B holds the next step'}: no run open without a job, no wake that changes anything`, async () => {
      const ran = { x: 0, y: 0, after: 0 };
      const y1 = { reached: gate(), release: gate() };
      const afterB = { reached: gate(), release: gate() };
      const bx = defineAction({ name: `review21-park-x-${order}`, run: async () => (ran.x++, 'x') });
      const by = defineAction({
        name: `review21-park-y-${order}`,
        run: async () => {
          ran.y++;
          if (ran.y === 1) {
            y1.reached.open();
            await y1.release.promise;
          }
          return `y-${ran.y}`;
        },
      });
      const after = defineAction({
        name: `review21-park-after-${order}`,
        run: async () => {
          ran.after++;
          if (order === 'b' && ran.after === 1) {
            afterB.reached.open();
            await afterB.release.promise;
          }
          return 'after';
        },
      });
      const flow = defineFlow({
        name: `review21-park-${order}`,
        version: 1,
        run: async (ctx) => {
          const both = await ctx.parallel([ctx.action(bx, null), ctx.action(by, null)]);
          return [both, await ctx.action(after, null)];
        },
      });
      const opts = { flows: [flow], actions: [bx, by, after] };
      const eA = bareEngine(db, opts);
      const eB = bareEngine(db, opts);
      const { runId } = await eA.startFlow(flow, null);
      const jobs = () => db.prisma.job.findMany({ where: { run_id: runId } });
      // The start's job is A's.
      await db.prisma.job.deleteMany({ where: { run_id: runId } });
      const liveA = executeRun(eA.runtime, runId);
      await y1.reached.promise;
      await waitFor('branch x recorded by A alone', async () =>
        (await db.prisma.actionRun.count({ where: { run_id: runId, sequence: 1, status: 'Completed' } })) === 1
          ? true
          : undefined,
      );
      // Worker A looks gone; the operator reclaims branch y; B takes the reclaim's wake.
      await db.prisma.$executeRaw`
        insert into "sagaflow"."workers" (id, started_at, heartbeat_at)
        values (${eA.runtime.workerId}, now() - interval '2 hours', now() - interval '1 hour')
        on conflict (id) do update set heartbeat_at = now() - interval '1 hour'`;
      expect((await reclaimY(db, eB, runId)).status).toBe('applied');
      await db.prisma.job.deleteMany({ where: { run_id: runId } });

      if (order === 'a') {
        expect(await executeRun(eB.runtime, runId)).toBe('finished');
        y1.release.open();
        await liveA;
        expect(await jobs()).toEqual([]);
      } else {
        const liveB = executeRun(eB.runtime, runId);
        await afterB.reached.promise;
        y1.release.open();
        expect(await liveA).toBe('parked');
        // The run is open and A's park did not land (B wrote the run since A loaded it); A recorded an
        // outcome, so it queued a wake while the run is open: the run is not left without one.
        expect([(await recordOf(db, runId)).run.open, (await jobs()).map((j) => j.kind)]).toEqual([true, ['wake-run']]);
        afterB.release.open();
        expect(await liveB).toBe('finished');
        // Whatever wake is left for the finished run is a no-op when taken.
        const before = await recordOf(db, runId);
        for (const _job of await jobs()) expect(await executeRun(eA.runtime, runId)).toBe('not-open');
        expect((await recordOf(db, runId)).names).toEqual(before.names);
      }
      const rec = await recordOf(db, runId);
      expect({
        run: rec.run,
        steps: rec.steps,
        duplicates: rec.duplicateStepOutcomes,
        ends: rec.ends,
        afterTheEnd: rec.afterTheEnd,
        rejected: rec.rejected,
        ran,
      }).toEqual({
        run: { status: 'Completed', open: false, error: null },
        steps: [
          [1, 'action', 'Completed', 1],
          [2, 'action', 'Completed', 2],
          [3, 'action', 'Completed', 1],
        ],
        duplicates: [],
        ends: 1,
        afterTheEnd: [],
        rejected: [2],
        ran: { x: 1, y: 2, after: 1 },
      });
    });
});

async function reclaimY(db: Database, e: Engine, runId: string) {
  const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
  const step = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 2 } });
  return e.repairs.apply({
    kind: 'run.reclaim_step',
    target: { runId, stepSequence: 2 },
    expected: { runStatus: run.status as 'Running', stepStatus: step.status as 'Running', stepAttempts: step.attempts },
    actor: 'review21@example.test',
    reason: 'review21: its worker looks gone',
    idempotencyKey: `review21-reclaim-${runId}`,
  });
}
