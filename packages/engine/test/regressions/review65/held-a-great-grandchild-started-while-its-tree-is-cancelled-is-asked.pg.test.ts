import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineFlow, type Json } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine } from '../harness.ts';
import { heldDriver } from '../review26/support/held-driver.ts';

/**
 * Review 65, HELD (ADR 0136's addendum: one statement per level, so "a child whose start held its parent then
 * is seen by the next level"), one level further down than review 64's test. P → C → G, all 'propagate'; G's
 * replay starts GG and its start transaction is held before its commit (review 26's heldDriver), holding G's
 * row. Then (a) an operator cancels P, or (b) P is overdue and the monitor expires it: the level that asks G is
 * seen waiting for G's row; GG's start is let go. GG is asked once, its reason naming the whole path.
 */
describe('held: a great-grandchild whose start holds its parent while the tree is cancelled is asked (postgres)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 6 });
  });
  afterAll(async () => {
    await db.close();
  });

  for (const how of ['cancel', 'expiry'] as const) {
    it(`${how}: GG is asked to cancel once`, async () => {
      const tag = `r65-ggc-${how}-${Date.now()}`;
      const gg = defineFlow({
        name: `${tag}-GG`,
        version: 1,
        run: async (ctx) => ctx.awaitSignal<Json>('go', { timeoutSeconds: 3600 }),
      });
      const g = defineFlow({
        name: `${tag}-G`,
        version: 1,
        run: async (ctx): Promise<Json> => ctx.child(gg, null, { cancellation: 'propagate' }),
      });
      const c = defineFlow({
        name: `${tag}-C`,
        version: 1,
        run: async (ctx): Promise<Json> => ctx.child(g, null, { cancellation: 'propagate' }),
      });
      const p = defineFlow({
        name: `${tag}-P`,
        version: 1,
        run: async (ctx): Promise<Json> => ctx.child(c, null, { cancellation: 'propagate' }),
      });
      const clock = new TestClock();
      const e = bareEngine(db, {
        clock,
        flows: [p, c, g, gg],
        actions: [],
        config: { sweeps: { held_run_wait_ms: 60_000, transaction_timeout_ms: 30_000 } },
      });
      const { runId: pId } = await e.startFlow(p, null, { expiresInSeconds: 60 });
      await executeRun(e.runtime, pId);
      const cId = (await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: pId } })).id;
      await executeRun(e.runtime, cId);
      const gId = (await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: cId } })).id;
      await db.prisma.job.deleteMany({ where: { run_id: { in: [pId, cId, gId] } } });

      const held = heldDriver(e.runtime, () => gId);
      held.childStart.arm();
      const live = executeRun(held.deps, gId);
      await held.childStart.reached;

      let command: Promise<unknown>;
      if (how === 'cancel') command = e.cancel(pId, { reason: 'ops: stop the tree' });
      else {
        clock.advance(120_000);
        command = e.sweepExpiredRuns();
      }
      await waitFor("the level asking G to wait for G's row", async () => {
        const [row] = await db.prisma.$queryRaw<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
           where datname = current_database() and wait_event_type = 'Lock' and query like '%cancel_reason =%'`;
        return (row?.n ?? 0) > 0 ? true : undefined;
      });
      held.childStart.release();
      await live;
      await command;

      const ggRow = await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: gId } });
      const rows = await db.prisma.flowRun.findMany({ where: { id: { in: [cId, gId, ggRow.id] } } });
      const events = await db.prisma.flowEvent.groupBy({
        by: ['run_id'],
        where: { run_id: { in: [cId, gId, ggRow.id] }, type: 'run.cancel_requested' },
        _count: true,
      });
      const name = (id: string) => (id === cId ? 'C' : id === gId ? 'G' : 'GG');
      expect({
        asked: rows
          .filter((r) => r.cancel_requested_at !== null)
          .map((r) => name(r.id))
          .sort(),
        events: Object.fromEntries(events.map((x) => [name(x.run_id), x._count])),
        ggReasonPath: ggRow.cancel_reason?.startsWith(`parent ${gId} was cancelled: parent ${cId} was cancelled: `),
      }).toEqual({ asked: ['C', 'G', 'GG'], events: { C: 1, G: 1, GG: 1 }, ggReasonPath: true });
    }, 30_000);
  }
});
