import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { bareEngine, gate } from '../harness.ts';
import { driveToEnd, drivenOn, recordOf } from './record.ts';

/**
 * Review 20. A run expires (run.expire, or the monitor past expiresInSeconds) while replay A stands
 * between two back-to-back steps: step 1 is recorded (its outcome rode on step 2's claim), step 2's
 * action has returned but its outcome is still buffered in A (it rides on A's next transaction), and A
 * waits in the flow's code (first replay only) before step 3. By the designed semantics step 2, Running in the database, is
 * marked Expired; A's buffered outcome for it is then turned away once; A claims nothing more; step 1's
 * compensation runs once in the cleanup window; the history ends with the terminal event; and
 * run.expiry_started and the audit row name undo-1, the compensation that runs.
 */
describe(`expiry between two back-to-back steps (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  for (const mode of ['repair', 'monitor'] as const)
    for (const order of ['B first', 'A first'] as const)
      it(`${mode}, ${order}: A writes nothing more, undo-1 runs once, the run ends Expired once`, async () => {
        const tag = `${mode}-${order === 'B first' ? 'b' : 'a'}`;
        const clock = new TestClock();
        const log: string[] = [];
        const between = { reached: gate(), release: gate() };
        let entered = 0;
        const mk = (n: string) => defineAction({ name: `review20-b2b-${n}-${tag}`, run: async () => (log.push(n), n) });
        const [s1, s2, s3, undo] = [mk('s1'), mk('s2'), mk('s3'), mk('undo')];
        const flow = defineFlow({
          name: `review20-expire-b2b-${tag}`,
          version: 1,
          run: async (ctx) => {
            entered += 1;
            const mine = entered;
            try {
              const a = await ctx
                .action(s1, null)
                .compensateWith(undo, () => null)
                .run();
              const b = await ctx.action(s2, null).run();
              if (mine === 1) {
                between.reached.open();
                await between.release.promise;
              }
              return [a, b, await ctx.action(s3, null)];
            } catch (err) {
              await ctx.compensate();
              throw err;
            }
          },
        });
        const e = bareEngine(db, {
          flows: [flow],
          actions: [s1, s2, s3, undo],
          clock,
          config: { monitor: { expiration: { plan_timeout_ms: 60_000 } } },
        });
        const emitted: string[][] = [];
        e.events.on('run.expired', (ev) => {
          emitted.push(ev.compensations.map((c) => c.name));
        });
        const { runId } = await e.startFlow(flow, null, { expiresInSeconds: 60 });
        const liveA = executeRun(e.runtime, runId);
        await between.reached.promise;
        if (mode === 'monitor') {
          clock.advance(120_000);
          expect((await e.sweepExpiredRuns()).expired).toEqual([runId]);
        } else {
          const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
          const r = await e.repairs.apply({
            kind: 'run.expire',
            target: { runId },
            expected: { runStatus: run.status as 'Running' },
            actor: 'review20@example.test',
            reason: 'review20: expire between two steps',
            idempotencyKey: `review20-expire-b2b-${runId}`,
            cleanupSeconds: 600,
          });
          expect(r.status).toBe('applied');
        }
        await db.prisma.job.deleteMany({ where: { run_id: runId, available_at: { lte: clock.now() } } });
        if (order === 'B first') {
          expect(await executeRun(e.runtime, runId)).toBe('finished');
          between.release.open();
          await liveA;
        } else {
          between.release.open();
          await liveA;
          expect(await drivenOn(db, e, runId)).toBe(true);
          await driveToEnd(db, e, runId);
        }
        const rec = await recordOf(db, runId);
        const undoName = `review20-b2b-undo-${tag}`;
        expect({ ...rec, names: undefined }).toEqual({
          ...rec,
          names: undefined,
          run: { status: 'Expired', open: false, error: rec.run.error },
          steps: [
            [1, 'action', 'Completed', 1],
            [2, 'action', 'Expired', 1],
          ],
          compensations: [[undoName, 'Completed', 1]],
          duplicateStepOutcomes: [],
          ends: 1,
          afterTheEnd: [],
          actionExpired: ['action.expired#2'],
          rejected: [2],
          expiryStarted: [undoName],
          ...(mode === 'repair' ? { audits: [['run.expire', 'applied']], auditCompensations: [[undoName]] } : {}),
        });
        expect(rec.run.error).not.toBe('CleanupWindowClosed');
        expect(emitted).toEqual([[undoName]]);
        expect(log).toEqual(['s1', 's2', 'undo']);
      });
});
