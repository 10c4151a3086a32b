import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { parkedWaiters } from '../../support/parked-waiters.ts';
import { seedOpenChildren } from '../../support/seed-open-children.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * Review 66, HELD. The one recursive statement and its catch-ups (ADR 0136's second addendum) over a tree with
 * every kind of node, through the monitor's expiry and then a terminate:
 * P (overdue) → C1 → G1 (fresh), P → C2 (Compensating, not asked) → G2, P → C3 (asked by an operator first,
 * 600 s) → G3 (asked with it) and G3b (started after, not asked).
 *
 * The expiry asks exactly C1, G1, C2, G2: one `run.cancel_requested` event and two wakes each, and leaves C3, G3
 * and G3b as they were (no event, no wake, reason and deadline unchanged). The terminate after it writes no
 * further `run.cancel_requested`, and ends every open descendant, C3's subtree included, `Terminated` with
 * exactly one `run.terminated` each.
 */
describe(`held: a mixed tree is asked once by an expiry, then terminated once (${testDbKind()})`, () => {
  let db: Database;
  let t: TestEngine;
  beforeEach(async () => {
    db = await openTestDatabase();
    t = await createTestEngine({ db, flows: [waiter], actions });
  });
  afterEach(async () => {
    await t?.close();
    await db?.close();
  });

  async function childOf(parent: string, status?: 'Compensating'): Promise<string> {
    const before = await db.prisma.flowRun.findMany({ where: { parent_run_id: parent }, select: { id: true } });
    await seedOpenChildren(db, parent, 1);
    const row = await db.prisma.flowRun.findFirstOrThrow({
      where: { parent_run_id: parent, id: { notIn: before.map((b) => b.id) } },
    });
    if (status) await db.prisma.flowRun.update({ where: { id: row.id }, data: { status } });
    return row.id;
  }

  async function snapshot(ids: string[]) {
    const rows = await db.prisma.flowRun.findMany({
      where: { id: { in: ids } },
      select: { id: true, cancel_reason: true, cancel_deadline_at: true, cancel_requested_at: true },
    });
    return new Map(rows.map((r) => [r.id, r]));
  }

  const count = async (type: string, runIds: string[], after: bigint) => {
    const rows = await db.prisma.flowEvent.groupBy({
      by: ['run_id'],
      where: { type, run_id: { in: runIds }, id: { gt: after } },
      _count: { _all: true },
    });
    return Object.fromEntries(runIds.map((id) => [id, rows.find((r) => r.run_id === id)?._count._all ?? 0]));
  };
  const lastEvent = async () =>
    (await db.prisma.flowEvent.findFirst({ orderBy: { id: 'desc' }, select: { id: true } }))?.id ?? 0n;

  it('the expiry asks the fresh runs once each; the terminate ends every open descendant once', async () => {
    const [p] = await parkedWaiters(t, [60]);
    const c1 = await childOf(p!);
    const g1 = await childOf(c1);
    const c2 = await childOf(p!, 'Compensating');
    const g2 = await childOf(c2);
    const c3 = await childOf(p!);
    const g3 = await childOf(c3);
    expect(await t.engine.cancel(c3, { reason: 'operator first', cleanupSeconds: 600 })).toEqual({ requested: true });
    const g3b = await childOf(c3);
    const fresh = [c1, g1, c2, g2];
    const left = [c3, g3, g3b];
    const name = new Map([
      [c1, 'C1'],
      [g1, 'G1'],
      [c2, 'C2'],
      [g2, 'G2'],
      [c3, 'C3'],
      [g3, 'G3'],
      [g3b, 'G3b'],
    ]);
    const named = (o: Record<string, number>) =>
      Object.fromEntries(Object.entries(o).map(([id, n]) => [name.get(id) ?? id, n]));

    const leftBefore = await snapshot(left);
    const jobsBefore = (await db.prisma.job.findMany({ select: { id: true } })).map((j) => j.id);
    const eventsBefore = await lastEvent();
    t.clock.advance(61_000);
    const swept = await t.engine.sweepExpiredRuns();
    expect(swept.expired).toEqual([p]);

    const wakes = await db.prisma.job.groupBy({
      by: ['run_id'],
      where: { kind: 'wake-run', id: { notIn: jobsBefore }, run_id: { in: [...fresh, ...left] } },
      _count: { _all: true },
    });
    const leftAfter = await snapshot(left);
    expect({
      events: named(await count('run.cancel_requested', [...fresh, ...left], eventsBefore)),
      wakes: Object.fromEntries(wakes.map((w) => [name.get(w.run_id!)!, w._count._all])),
      leftUnchanged: left.map((id) => JSON.stringify(leftAfter.get(id)) === JSON.stringify(leftBefore.get(id))),
      g1Reason: (await snapshot([g1])).get(g1)?.cancel_reason,
    }).toEqual({
      events: { C1: 1, G1: 1, C2: 1, G2: 1, C3: 0, G3: 0, G3b: 0 },
      wakes: { C1: 2, G1: 2, C2: 2, G2: 2 },
      leftUnchanged: [true, true, true],
      g1Reason: `parent ${c1} was cancelled: parent ${p} expired: its business deadline passed at ${new Date(
        (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: p! } })).expires_at!,
      ).toISOString()}`,
    });

    const beforeTerminate = await lastEvent();
    expect(await t.engine.terminate(p!, { reason: 'stopped by ops' })).toEqual({ terminated: true });
    const all = [...fresh, ...left];
    const statuses = await db.prisma.flowRun.findMany({
      where: { id: { in: all } },
      select: { id: true, status: true },
    });
    expect({
      cancelEvents: Object.values(await count('run.cancel_requested', all, beforeTerminate)).reduce((a, b) => a + b),
      terminatedEvents: named(await count('run.terminated', all, beforeTerminate)),
      statuses: Object.fromEntries(statuses.map((s) => [name.get(s.id)!, s.status])),
    }).toEqual({
      cancelEvents: 0,
      terminatedEvents: { C1: 1, G1: 1, C2: 1, G2: 1, C3: 1, G3: 1, G3b: 1 },
      statuses: {
        C1: 'Terminated',
        G1: 'Terminated',
        C2: 'Terminated',
        G2: 'Terminated',
        C3: 'Terminated',
        G3: 'Terminated',
        G3b: 'Terminated',
      },
    });
  }, 30_000);
});
