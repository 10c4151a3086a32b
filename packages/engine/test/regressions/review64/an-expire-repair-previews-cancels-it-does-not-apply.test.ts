import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import type { RepairCommand } from '../../../src/index.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { parkedWaiters } from '../../support/parked-waiters.ts';
import { seedOpenChildren } from '../../support/seed-open-children.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * Review 64, attacking ADR 0136 with the `run.expire` repair (ARCHITECTURE: a repair "is previewed (the
 * transition, compensations and outbox messages it would cause), then applied"; ADR 0136: "a child already
 * asked to cancel is left as it is, with what is under it").
 *
 * Parent P (parked waiter) has two open 'propagate' children, C1 and C2 (seeded as a fan-out leaves them);
 * C2 has an open 'propagate' child G. An operator cancels C2 (C2 and G are asked to cancel). Then an operator
 * previews and applies `run.expire` on P. The apply (startExpiryInTransaction → requestDescendantsCancel)
 * asks C1 only: C2 was already asked, and what is under it is left alone. The preview's history lists
 * `run.cancel_requested (child <id>)` for every open descendant (listOpenTree), C2 and G included, and the
 * applied result repeats the preview: the operator is told of two cancel requests that are not made.
 */
describe(`run.expire on a parent with a child already asked to cancel: preview against what is applied (${testDbKind()})`, () => {
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

  it('the cancel requests the preview and the result list are the ones written', async () => {
    const [parentId] = await parkedWaiters(t, [3600]);
    await seedOpenChildren(db, parentId!, 2);
    const kids = await db.prisma.flowRun.findMany({ where: { parent_run_id: parentId! }, orderBy: { id: 'asc' } });
    const [c1, c2] = [kids[0]!.id, kids[1]!.id];
    await seedOpenChildren(db, c2, 1);
    const g = (await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: c2 } })).id;
    expect(await t.engine.cancel(c2, { reason: 'operator: not needed' })).toEqual({ requested: true });
    const before = await db.prisma.flowEvent.findMany({
      where: { type: 'run.cancel_requested' },
      select: { id: true },
    });

    const parent = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: parentId! } });
    const cmd = {
      kind: 'run.expire',
      target: { runId: parentId! },
      expected: { runStatus: parent.status },
      actor: 'ops@example.test',
      reason: 'review 64: the customer gave up',
      idempotencyKey: randomUUID(),
      cleanupSeconds: 600,
    } as RepairCommand;
    const preview = await t.engine.repairs.preview(cmd);
    const applied = await t.engine.repairs.apply(cmd);

    const previewed = (h: string[]) =>
      h
        .map((x) => /^run\.cancel_requested \(child (.+)\)$/.exec(x)?.[1])
        .filter((x): x is string => x !== undefined)
        .sort();
    const written = (
      await db.prisma.flowEvent.findMany({
        where: { type: 'run.cancel_requested', id: { notIn: before.map((b) => b.id) } },
        select: { run_id: true },
      })
    )
      .map((e) => e.run_id)
      .filter((id) => id !== parentId)
      .sort();
    const name = (id: string) => (id === c1 ? 'C1' : id === c2 ? 'C2' : id === g ? 'G' : id);
    expect({
      status: applied.status,
      written: written.map(name),
      previewed: previewed(preview.effects.history).map(name),
      resultSays: previewed(applied.effects.history).map(name),
    }).toEqual({ status: 'applied', written: ['C1'], previewed: ['C1'], resultSays: ['C1'] });
  }, 30_000);
});
