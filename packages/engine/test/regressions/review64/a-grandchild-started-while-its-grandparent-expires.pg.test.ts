import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineAction, defineFlow, NonRetryableError, type Json } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine, gate } from '../harness.ts';
import { heldDriver } from '../review26/support/held-driver.ts';

/**
 * Review 64, attacking ADR 0136 (an expiry asks its whole open 'propagate' tree to cancel in ONE statement,
 * promising "every existing guarantee", among them a child starting while its parent is cancelled: ADR 0094,
 * review 26). Real PostgreSQL, several connections.
 *
 * P (deadline 60 s) awaits child C ('propagate'); C awaits grandchild G ('propagate'). C's replay starts G: its
 * start transaction (G's row inserted, C's row written under C's lock, ADR 0094) is held by the engine's own
 * driver after its work and before its commit. P is then overdue and the monitor's expiry sweep runs: it locks
 * P and sends its one statement, which waits for C's row (seen waiting in pg_stat_activity). G's start then
 * commits, the statement goes on and the expiry commits.
 *
 * Before ADR 0136, `cancelTree(C)` requested C's cancel (waiting for C's lock) and THEN sent the statement over
 * C's descendants, whose snapshot was taken after G's start committed: G was asked to cancel. Now the tree is
 * read once, from the snapshot the one statement took before G's start committed: C is asked to cancel (its
 * row re-checked after the wait), but G, committed under C's lock, is not in the tree.
 */
describe("a grandchild's start that holds its parent's row while the grandparent expires (postgres)", () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 6 });
  });
  afterAll(async () => {
    await db.close();
  });

  it('every open propagate descendant of the expired parent is asked to cancel, the grandchild included', async () => {
    const tag = `r64-gc-${Date.now()}`;
    const g = defineFlow({
      name: `${tag}-G`,
      version: 1,
      run: async (ctx) => ctx.awaitSignal<Json>('go', { timeoutSeconds: 3600 }),
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
      flows: [p, c, g],
      actions: [],
      config: { sweeps: { held_run_wait_ms: 60_000, transaction_timeout_ms: 30_000 } },
    });
    const { runId: parentId } = await e.startFlow(p, null, { expiresInSeconds: 60 });
    await executeRun(e.runtime, parentId);
    const child = await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: parentId } });
    await db.prisma.job.deleteMany({ where: { run_id: { in: [parentId, child.id] } } });

    // C's replay starts G; its start transaction is held before its commit, holding C's row.
    const held = heldDriver(e.runtime, () => child.id);
    held.childStart.arm();
    const live = executeRun(held.deps, child.id);
    await held.childStart.reached;

    clock.advance(120_000);
    const sweep = e.sweepExpiredRuns();
    await waitFor("the expiry's statement to wait for C's row", async () => {
      const [row] = await db.prisma.$queryRaw<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock' and query like '%cancel_reason =%'`;
      return (row?.n ?? 0) > 0 ? true : undefined;
    });
    held.childStart.release();
    const outcome = await live;
    const swept = await sweep;

    const grandchild = await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: child.id } });
    const rows = await db.prisma.flowRun.findMany({ where: { id: { in: [child.id, grandchild.id] } } });
    const byId = new Map(rows.map((r) => [r.id, r]));
    const events = await db.prisma.flowEvent.findMany({
      where: { run_id: grandchild.id, type: 'run.cancel_requested' },
    });
    const deadline = (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: parentId } })).expires_at!;
    const expiredReason = `parent ${parentId} expired: its business deadline passed at ${deadline.toISOString()}`;
    const view = (id: string) => ({
      open: !['Completed', 'Failed', 'Cancelled', 'Expired', 'Terminated', 'TimedOut'].includes(byId.get(id)!.status),
      cancelRequested: byId.get(id)!.cancel_requested_at !== null,
      reason: byId.get(id)!.cancel_reason,
    });
    expect({
      outcome,
      expired: swept.expired,
      child: view(child.id),
      grandchild: view(grandchild.id),
      grandchildEvents: events.length,
    }).toEqual({
      outcome,
      expired: [parentId],
      child: {
        open: true,
        cancelRequested: true,
        reason: expiredReason,
      },
      grandchild: {
        open: true,
        cancelRequested: true,
        reason: `parent ${child.id} was cancelled: ${expiredReason}`,
      },
      grandchildEvents: 1,
    });
  }, 30_000);

  it('every open propagate descendant of a parent that ends with its child open is asked to cancel, the grandchild included', async () => {
    const tag = `r64-gc-end-${Date.now()}`;
    const reached = gate();
    const go = gate();
    const boom = defineAction({
      name: `${tag}-boom`,
      run: async () => {
        reached.open();
        await go.promise;
        throw new NonRetryableError('the downstream service refused it');
      },
    });
    const g = defineFlow({
      name: `${tag}-G`,
      version: 1,
      run: async (ctx) => ctx.awaitSignal<Json>('go', { timeoutSeconds: 3600 }),
    });
    const c = defineFlow({
      name: `${tag}-C`,
      version: 1,
      run: async (ctx): Promise<Json> => ctx.child(g, null, { cancellation: 'propagate' }),
    });
    // A fan-out that one branch fails: P's code throws with C open, and its end asks C to cancel (ADR 0093).
    const p = defineFlow({
      name: `${tag}-P`,
      version: 1,
      run: async (ctx): Promise<Json> => {
        const [fromC] = await Promise.all([
          ctx.child(c, null, { cancellation: 'propagate' }),
          ctx.action(boom, null).run(),
        ]);
        return fromC;
      },
    });
    const e = bareEngine(db, { clock: new TestClock(), flows: [p, c, g], actions: [boom] });
    const { runId: parentId } = await e.startFlow(p, null);
    await db.prisma.job.deleteMany({ where: { run_id: parentId } });
    const first = executeRun(e.runtime, parentId);
    await reached.promise;
    await first;
    const child = await waitFor('C to be started', async () => {
      const row = await db.prisma.flowRun.findFirst({ where: { parent_run_id: parentId } });
      return row ?? undefined;
    });
    await db.prisma.job.deleteMany({ where: { run_id: { in: [parentId, child.id] } } });

    // C's replay starts G; its start transaction is held before its commit, holding C's row.
    const held = heldDriver(e.runtime, () => child.id);
    held.childStart.arm();
    const live = executeRun(held.deps, child.id);
    await held.childStart.reached;

    // boom fails for good; P's next replay ends P Failed, asks its open tree to cancel, and waits for C's row.
    go.open();
    await waitFor("boom's failure to be recorded", async () => {
      const step = await db.prisma.actionRun.findFirst({ where: { run_id: parentId, name: boom.name } });
      return step && step.status !== 'Running' && step.status !== 'Pending' ? true : undefined;
    });
    await db.prisma.job.deleteMany({ where: { run_id: parentId } });
    const ending = executeRun(e.runtime, parentId);
    await waitFor("the end's statement to wait for C's row", async () => {
      const [row] = await db.prisma.$queryRaw<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock' and query like '%cancel_reason =%'`;
      return (row?.n ?? 0) > 0 ? true : undefined;
    });
    held.childStart.release();
    await live;
    const ended = await ending;

    const parent = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: parentId } });
    const grandchild = await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: child.id } });
    const rows = await db.prisma.flowRun.findMany({ where: { id: { in: [child.id, grandchild.id] } } });
    const byId = new Map(rows.map((r) => [r.id, r]));
    const view = (id: string) => ({
      cancelRequested: byId.get(id)!.cancel_requested_at !== null,
      reason: byId.get(id)!.cancel_reason,
    });
    expect({ ended, parent: parent.status, child: view(child.id), grandchild: view(grandchild.id) }).toEqual({
      ended: 'finished',
      parent: 'Failed',
      child: { cancelRequested: true, reason: `parent ${parentId} ended Failed before this run finished` },
      grandchild: {
        cancelRequested: true,
        reason: `parent ${child.id} was cancelled: parent ${parentId} ended Failed before this run finished`,
      },
    });
  }, 30_000);
});
