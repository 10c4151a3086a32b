import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { parkedWaiters } from '../../support/parked-waiters.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * Review 64, HELD (ADR 0136's promises on a mixed tree, the monitor's expiry): P overdue with
 * - C1 'propagate' → G1 'propagate' (both asked, G1's reason naming the path);
 * - A 'abandon' → GA 'propagate' (untouched: the walk does not go through an abandoned child);
 * - C2 'propagate' → G2 'abandon' (C2 asked, G2 untouched);
 * - C3 'propagate', already asked to cancel by an operator, → G3 'propagate' started after that request
 *   (C3 and G3 left as they are: "a child already asked to cancel is left alone with its subtree").
 * One `run.cancel_requested` event and two wakes per run reached, level by level (ADR 0136's second addendum).
 */
describe(`held: an expiry asks exactly its open 'propagate' tree (${testDbKind()})`, () => {
  let db: Database;
  let t: TestEngine;
  beforeAll(async () => {
    db = await openTestDatabase();
    t = await createTestEngine({ db, flows: [waiter], actions });
  });
  afterAll(async () => {
    await t?.close();
    await db?.close();
  });

  const child = async (parent: string, seq: number, policy: 'propagate' | 'abandon') => {
    const [row] = await db.prisma.$queryRaw<{ id: string }[]>`
      insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, parent_run_id, parent_sequence, parent_cancel_policy)
      values (${waiter.name}, 1, 'Waiting', '{}'::jsonb, ${parent}::uuid, ${seq}::int, ${policy})
      returning id::text as id`;
    return row!.id;
  };

  it('asks C1, G1 and C2, once each, level by level; leaves the rest alone', async () => {
    const [p] = await parkedWaiters(t, [60]);
    const c1 = await child(p!, 101, 'propagate');
    const g1 = await child(c1, 101, 'propagate');
    const a = await child(p!, 102, 'abandon');
    const ga = await child(a, 101, 'propagate');
    const c2 = await child(p!, 103, 'propagate');
    const g2 = await child(c2, 101, 'abandon');
    const c3 = await child(p!, 104, 'propagate');
    expect(await t.engine.cancel(c3, { reason: 'operator' })).toEqual({ requested: true });
    const g3 = await child(c3, 101, 'propagate');
    const names = new Map([
      [c1, 'C1'],
      [g1, 'G1'],
      [a, 'A'],
      [ga, 'GA'],
      [c2, 'C2'],
      [g2, 'G2'],
      [c3, 'C3'],
      [g3, 'G3'],
    ]);
    const ids = [...names.keys()];
    const eventsBefore = await db.prisma.flowEvent.findMany({ where: { run_id: { in: ids } }, select: { id: true } });
    const jobsBefore = await db.prisma.job.findMany({ where: { run_id: { in: ids } }, select: { id: true } });

    t.clock.advance(120_000);
    const swept = await t.engine.sweepExpiredRuns();

    const events = await db.prisma.flowEvent.findMany({
      where: { run_id: { in: ids }, id: { notIn: eventsBefore.map((e) => e.id) } },
      orderBy: { id: 'asc' },
    });
    const jobs = await db.prisma.job.findMany({
      where: { run_id: { in: ids }, id: { notIn: jobsBefore.map((j) => j.id) } },
    });
    const rows = await db.prisma.flowRun.findMany({ where: { id: { in: ids } } });
    const deadline = (await db.prisma.flowRun.findUniqueOrThrow({ where: { id: p! } })).expires_at!.toISOString();
    const why = `parent ${p} expired: its business deadline passed at ${deadline}`;
    // Level by level, in id order within a level (ADR 0136's second addendum).
    const expectedOrder = [...[c1, c2].sort(), g1].map((x) => names.get(x));
    expect({
      expired: swept.expired,
      events: events.map((e) => [names.get(e.run_id), e.type]),
      wakes: Object.fromEntries(
        [...names].map(([id, n]) => [n, jobs.filter((j) => j.run_id === id && j.kind === 'wake-run').length]),
      ),
      reasons: Object.fromEntries(rows.map((r): [string, string | null] => [names.get(r.id)!, r.cancel_reason])),
    }).toEqual({
      expired: [p],
      events: expectedOrder.map((n) => [n, 'run.cancel_requested']),
      wakes: { C1: 2, G1: 2, A: 0, GA: 0, C2: 2, G2: 0, C3: 0, G3: 0 },
      reasons: {
        C1: why,
        G1: `parent ${c1} was cancelled: ${why}`,
        A: null,
        GA: null,
        C2: why,
        G2: null,
        C3: 'operator',
        G3: null,
      },
    });
  }, 30_000);
});
