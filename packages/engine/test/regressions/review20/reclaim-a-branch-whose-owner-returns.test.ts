import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, type Engine } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { driveToEnd, drivenOn, recordOf } from './record.ts';

/**
 * Review 20. run.reclaim_step on one branch of a ctx.parallel round whose owner (replay A, worker A)
 * is alive but looks gone (its heartbeat is an hour old: a long pause), so the repair applies; the
 * owner then returns late with both branches. Replay B runs on a second engine (worker B, alive).
 * Designed: the reclaimed branch keeps exactly one outcome (B's attempt 2); A's attempt-1 outcome for it
 * is rejected once (outcome_rejected); A's other branch is recorded; the run finishes once, Completed,
 * with the step after the round run once, and nothing after its terminal event.
 *
 * Orders, by progress: (a) B records the branch before A returns; (b) A returns before B replays;
 * (c) B holds the branch (attempt 2 running) when A returns.
 */
describe(`reclaim_step on a branch whose owner returns late (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  for (const order of ['a', 'b', 'c'] as const) {
    it(`order (${order}): one outcome kept for the reclaimed branch, the run finishes once`, async () => {
      const s = await roundOutWithOwnerGone(db, order);
      // The start's job was taken by A.
      await db.prisma.job.deleteMany({ where: { run_id: s.runId } });
      const reclaim = await reclaimY(db, s.eB, s.runId);
      expect(reclaim.status).toBe('applied');
      // B is the reclaim's wake: taken here, then replayed on engine B.
      const takeWake = () => db.prisma.job.deleteMany({ where: { run_id: s.runId } });

      if (order === 'a') {
        // B: branch 1 is held by a worker that looks gone (stuck, visible); branch 2 runs here, attempt 2.
        await takeWake();
        expect(await executeRun(s.eB.runtime, s.runId)).toBe('parked');
        s.y1.release.open();
        await waitFor("A's attempt 1 turned away", async () => (s.rejected.length > 0 ? true : undefined));
        s.x.release.open();
        await s.liveA;
      } else if (order === 'b') {
        s.y1.release.open();
        await waitFor("A's attempt 1 turned away", async () => (s.rejected.length > 0 ? true : undefined));
        s.x.release.open();
        await s.liveA;
        await takeWake();
        await executeRun(s.eB.runtime, s.runId);
        expect(await drivenOn(db, s.eB, s.runId)).toBe(true);
        await driveToEnd(db, s.eB, s.runId);
      } else {
        await takeWake();
        const liveB = executeRun(s.eB.runtime, s.runId);
        await s.y2.reached.promise;
        s.y1.release.open();
        await waitFor("A's attempt 1 turned away", async () => (s.rejected.length > 0 ? true : undefined));
        s.x.release.open();
        await s.liveA;
        s.y2.release.open();
        await liveB;
        expect(await drivenOn(db, s.eB, s.runId)).toBe(true);
        await driveToEnd(db, s.eB, s.runId);
      }
      const rec = await recordOf(db, s.runId);
      const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: s.runId } });
      expect({ ...rec, names: undefined }).toEqual({
        ...rec,
        names: undefined,
        run: { status: 'Completed', open: false, error: null },
        steps: [
          [1, 'action', 'Completed', 1],
          [2, 'action', 'Completed', 2],
          [3, 'action', 'Completed', 1],
        ],
        duplicateStepOutcomes: [],
        ends: 1,
        afterTheEnd: [],
        rejected: [2],
        audits: [['run.reclaim_step', 'applied']],
      });
      expect(run.output).toEqual([['x', 'y-attempt-2'], 'after']);
      expect(s.rejected).toEqual([2]);
      expect(s.ran).toEqual({ x: 1, y: 2, after: 1 });
    });
  }
});

async function reclaimY(db: Database, e: Engine, runId: string) {
  const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
  const step = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 2 } });
  return e.repairs.apply({
    kind: 'run.reclaim_step',
    target: { runId, stepSequence: 2 },
    expected: { runStatus: run.status as 'Running', stepStatus: step.status as 'Running', stepAttempts: step.attempts },
    actor: 'review20@example.test',
    reason: 'review20: its worker looks gone',
    idempotencyKey: `review20-reclaim-${runId}`,
  });
}

/** Replay A (worker A) holds both branches; worker A's heartbeat is then made an hour old. */
async function roundOutWithOwnerGone(db: Database, tag: string) {
  const ran = { x: 0, y: 0, after: 0 };
  const x = { reached: gate(), release: gate() };
  const y1 = { reached: gate(), release: gate() };
  const y2 = { reached: gate(), release: gate() };
  const bx = defineAction({
    name: `review20-recl-x-${tag}`,
    run: async () => {
      ran.x++;
      x.reached.open();
      await x.release.promise;
      return 'x';
    },
  });
  const by = defineAction({
    name: `review20-recl-y-${tag}`,
    run: async () => {
      ran.y++;
      const attempt = ran.y;
      const g = attempt === 1 ? y1 : y2;
      g.reached.open();
      if (attempt === 1 || tag === 'c') await g.release.promise;
      return `y-attempt-${attempt}`;
    },
  });
  const after = defineAction({ name: `review20-recl-after-${tag}`, run: async () => (ran.after++, 'after') });
  const flow = defineFlow({
    name: `review20-reclaim-branch-${tag}`,
    version: 1,
    run: async (ctx) => {
      const both = await ctx.parallel([ctx.action(bx, null), ctx.action(by, null)]);
      return [both, await ctx.action(after, null)];
    },
  });
  const opts = { flows: [flow], actions: [bx, by, after] };
  const eA = bareEngine(db, opts);
  const eB = bareEngine(db, opts);
  const rejected: number[] = [];
  for (const e of [eA, eB])
    e.events.on('action.outcome_rejected', (ev) => {
      rejected.push(ev.sequence);
    });
  const { runId } = await eA.startFlow(flow, null);
  const liveA = executeRun(eA.runtime, runId);
  await x.reached.promise;
  await y1.reached.promise;
  await waitFor('both branches Running', async () =>
    (await db.prisma.actionRun.count({ where: { run_id: runId, status: 'Running' } })) === 2 ? true : undefined,
  );
  // Worker A looks gone (an hour without a heartbeat, on the database clock), though replay A is alive.
  await db.prisma.$executeRaw`
    insert into "sagaflow"."workers" (id, started_at, heartbeat_at)
    values (${eA.runtime.workerId}, now() - interval '2 hours', now() - interval '1 hour')
    on conflict (id) do update set heartbeat_at = now() - interval '1 hour'`;
  return { eA, eB, runId, x, y1, y2, liveA, ran, rejected };
}
