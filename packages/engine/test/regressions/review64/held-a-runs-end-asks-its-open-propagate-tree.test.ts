import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { defineFlow, type Json } from '../../../src/index.ts';
import { executeRun } from '../../../src/runtime/execute-run.ts';
import { TestClock } from '../../../src/testing/test-clock.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { bareEngine } from '../harness.ts';

/**
 * Review 64, HELD (ADR 0136 at a run's end, ADR 0093): P's code returns while children it did not await are
 * open: C1 and C2 'propagate' (C2 with a 'propagate' grandchild G and an 'abandon' grandchild GA), A
 * 'abandon'. P ends Completed once; its end event lists `children_cancelled: [C1, C2]` in id order; C1 and C2
 * are asked with `parent P ended Completed before this run finished`, G with `parent C2 was cancelled: …`;
 * A and GA are untouched; one `run.cancel_requested` event and two wakes per run reached; nothing is written
 * to P after its end event.
 */
describe(`held: a run's end asks exactly its open 'propagate' tree (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('children_cancelled lists C1 and C2 in id order; the tree is asked once; abandoned runs are left alone', async () => {
    const p = defineFlow({
      name: `r64-end-${Date.now()}`,
      version: 1,
      run: async (ctx): Promise<Json> => ctx.awaitSignal<Json>('go', { timeoutSeconds: 3600 }),
    });
    const e = bareEngine(db, { clock: new TestClock(), flows: [p], actions: [] });
    const { runId: parentId } = await e.startFlow(p, null);
    await db.prisma.job.deleteMany({ where: { run_id: parentId } });
    expect(await executeRun(e.runtime, parentId)).toBe('parked');
    // Children a fan-out left open (the code that asked for them is not this test's subject).
    const child = async (parent: string, seq: number, policy: 'propagate' | 'abandon') => {
      const [row] = await db.prisma.$queryRaw<{ id: string }[]>`
        insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, parent_run_id, parent_sequence, parent_cancel_policy)
        values (${p.name}, 1, 'Waiting', '{}'::jsonb, ${parent}::uuid, ${seq}::int, ${policy})
        returning id::text as id`;
      return row!.id;
    };
    const c1 = await child(parentId, 101, 'propagate');
    const c2 = await child(parentId, 102, 'propagate');
    const a = await child(parentId, 103, 'abandon');
    const g = await child(c2, 101, 'propagate');
    const ga = await child(c2, 102, 'abandon');
    const names = new Map([
      [c1, 'C1'],
      [c2, 'C2'],
      [a, 'A'],
      [g, 'G'],
      [ga, 'GA'],
    ]);
    const ids = [...names.keys()];

    await e.signal(parentId, 'go', 'now');
    await db.prisma.job.deleteMany({ where: { run_id: parentId } });
    expect(await executeRun(e.runtime, parentId)).toBe('finished');

    const parent = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: parentId } });
    const parentEvents = await db.prisma.flowEvent.findMany({ where: { run_id: parentId }, orderBy: { id: 'asc' } });
    const end = parentEvents.find((x) => x.type === 'run.completed');
    const rows = await db.prisma.flowRun.findMany({ where: { id: { in: ids } } });
    const events = await db.prisma.flowEvent.findMany({ where: { run_id: { in: ids } }, orderBy: { id: 'asc' } });
    const jobs = await db.prisma.job.findMany({ where: { run_id: { in: ids } } });
    const ended = `parent ${parentId} ended Completed before this run finished`;
    expect({
      status: parent.status,
      lastEvent: parentEvents.at(-1)?.type,
      childrenCancelled: ((end?.data as { children_cancelled?: string[] }).children_cancelled ?? []).map((x) =>
        names.get(x),
      ),
      events: events.map((x) => [names.get(x.run_id), x.type]),
      wakes: Object.fromEntries([...names].map(([id, n]) => [n, jobs.filter((j) => j.run_id === id).length])),
      reasons: Object.fromEntries(rows.map((r): [string, string | null] => [names.get(r.id)!, r.cancel_reason])),
    }).toEqual({
      status: 'Completed',
      lastEvent: 'run.completed',
      childrenCancelled: [c1, c2].sort().map((x) => names.get(x)),
      // Level by level, in id order within a level (ADR 0136's second addendum).
      events: [...[c1, c2].sort().map((x) => [names.get(x), 'run.cancel_requested']), ['G', 'run.cancel_requested']],
      wakes: { C1: 2, C2: 2, A: 0, G: 2, GA: 0 },
      reasons: { C1: ended, C2: ended, A: null, G: `parent ${c2} was cancelled: ${ended}`, GA: null },
    });
  }, 30_000);
});
