import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import type { RepairCommand } from '../../../src/index.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { parkedWaiters } from '../../support/parked-waiters.ts';
import { seedOpenChildren } from '../../support/seed-open-children.ts';
import { openTestDatabase, testDbKind } from '../../support/test-database.ts';
import { actions, waiter } from '../../repairs/support/repair-fixtures.ts';

/**
 * Review 65, HELD (ADR 0136's addendum: both repairs' plans list `listCancelReach`, "the open 'propagate'
 * descendants not yet asked, reached through runs not yet asked, which is what the statements ask"). A tree
 * three levels deep with every kind of node: P → C1 → G1 → GG1 (all 'propagate', open), C1 → GA ('abandon'),
 * P → C2 (asked by an operator) → G2 (open, not asked: started after), P → A ('abandon') → AG ('propagate'),
 * P → D (Completed) → DG (open 'propagate'). Preview, apply and the written `run.cancel_requested` events name
 * exactly C1, G1, GG1, for `run.cancel` and for `run.expire`.
 */
describe(`held: the cancel and expire repairs preview exactly the runs they ask, three levels deep (${testDbKind()})`, () => {
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

  async function childOf(parent: string, change?: { policy?: 'abandon'; status?: 'Completed' }): Promise<string> {
    const before = await db.prisma.flowRun.findMany({ where: { parent_run_id: parent }, select: { id: true } });
    await seedOpenChildren(db, parent, 1);
    const row = await db.prisma.flowRun.findFirstOrThrow({
      where: { parent_run_id: parent, id: { notIn: before.map((b) => b.id) } },
    });
    if (change)
      await db.prisma.flowRun.update({
        where: { id: row.id },
        data: {
          ...(change.policy ? { parent_cancel_policy: change.policy } : {}),
          ...(change.status ? { status: change.status, finished_at: new Date() } : {}),
        },
      });
    return row.id;
  }

  for (const kind of ['run.cancel', 'run.expire'] as const) {
    it(`${kind}: preview, result and written requests agree`, async () => {
      const [p] = await parkedWaiters(t, [3600]);
      const c1 = await childOf(p!);
      const g1 = await childOf(c1);
      const gg1 = await childOf(g1);
      const ga = await childOf(c1, { policy: 'abandon' });
      const c2 = await childOf(p!);
      expect(await t.engine.cancel(c2, { reason: 'operator first' })).toEqual({ requested: true });
      const g2 = await childOf(c2);
      const a = await childOf(p!, { policy: 'abandon' });
      const ag = await childOf(a);
      const d = await childOf(p!, { status: 'Completed' });
      const dg = await childOf(d);
      const names = new Map([
        [c1, 'C1'],
        [g1, 'G1'],
        [gg1, 'GG1'],
        [ga, 'GA'],
        [c2, 'C2'],
        [g2, 'G2'],
        [a, 'A'],
        [ag, 'AG'],
        [d, 'D'],
        [dg, 'DG'],
      ]);
      const name = (id: string) => names.get(id) ?? id;
      const before = (await db.prisma.flowEvent.findMany({ select: { id: true } })).map((e) => e.id);
      const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: p! } });
      const cmd = {
        kind,
        target: { runId: p! },
        expected: { runStatus: run.status },
        actor: 'ops@example.test',
        reason: 'review 65',
        idempotencyKey: randomUUID(),
        cleanupSeconds: 600,
      } as RepairCommand;
      const preview = await t.engine.repairs.preview(cmd);
      const applied = await t.engine.repairs.apply(cmd);
      const listed = (h: string[]) =>
        h
          .map((x) => /^run\.cancel_requested \(child (.+)\)$/.exec(x)?.[1])
          .filter((x): x is string => x !== undefined)
          .map(name)
          .sort();
      const written = await db.prisma.flowEvent.findMany({
        where: { type: 'run.cancel_requested', id: { notIn: before }, run_id: { not: p! } },
        select: { run_id: true },
      });
      const asked = ['C1', 'G1', 'GG1'];
      expect({
        status: applied.status,
        previewed: listed(preview.effects.history),
        resultSays: listed(applied.effects.history),
        written: written.map((e) => name(e.run_id)).sort(),
      }).toEqual({ status: 'applied', previewed: asked, resultSays: asked, written: asked });
    }, 30_000);
  }
});
