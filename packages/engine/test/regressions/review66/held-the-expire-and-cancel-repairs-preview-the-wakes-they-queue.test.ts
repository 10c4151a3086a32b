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
 * Review 66, HELD (review 65's fix: "The `run.expire` repair's preview and result … list them now, as the
 * `run.cancel` repair's do"). Preview equals effect, to the run and the time of each wake, on a tree with every
 * kind of node: P → C1 → G1 → GG1 (fresh), P → C2 (`Compensating`, not asked) → G2, P → C3 (asked first by an
 * operator) → G3b (started after, not asked). For `run.expire` and `run.cancel`, the `wake-run` jobs previewed, the
 * ones the result lists and the ones written are the same (run, time) pairs: two for P and each of C1, G1, GG1,
 * C2, G2 (now, and when the cleanup window closes), none for C3 or G3b.
 */
describe(`held: the expire and cancel repairs preview the wakes they queue (${testDbKind()})`, () => {
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

  for (const kind of ['run.expire', 'run.cancel'] as const) {
    it(`${kind}: previewed, reported and written wakes are the same runs at the same times`, async () => {
      const [p] = await parkedWaiters(t, [3600]);
      const c1 = await childOf(p!);
      const g1 = await childOf(c1);
      const gg1 = await childOf(g1);
      const c2 = await childOf(p!, 'Compensating');
      const g2 = await childOf(c2);
      const c3 = await childOf(p!);
      expect(await t.engine.cancel(c3, { reason: 'operator first' })).toEqual({ requested: true });
      const g3b = await childOf(c3);
      const names = new Map<string, string>([
        [p!, 'P'],
        [c1, 'C1'],
        [g1, 'G1'],
        [gg1, 'GG1'],
        [c2, 'C2'],
        [g2, 'G2'],
        [c3, 'C3'],
        [g3b, 'G3b'],
      ]);
      const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: p! } });
      const cmd = {
        kind,
        target: { runId: p! },
        expected: { runStatus: run.status },
        actor: 'ops@example.test',
        reason: 'review 66',
        idempotencyKey: randomUUID(),
        cleanupSeconds: 600,
      } as RepairCommand;
      const now = t.clock.now().getTime();
      const label = (runId: string, at: string | Date) =>
        `${names.get(runId) ?? runId}+${(new Date(at).getTime() - now) / 1000}s`;
      const preview = await t.engine.repairs.preview(cmd);
      const before = (await db.prisma.job.findMany({ select: { id: true } })).map((j) => j.id);
      const applied = await t.engine.repairs.apply(cmd);
      const written = await db.prisma.job.findMany({
        where: { kind: 'wake-run', id: { notIn: before } },
        select: { run_id: true, available_at: true },
      });
      const expected = ['P', 'C1', 'G1', 'GG1', 'C2', 'G2'].flatMap((n) => [`${n}+0s`, `${n}+600s`]).sort();
      expect({
        status: applied.status,
        previewed: preview.effects.jobs.map((j) => label(j.runId, j.availableAt)).sort(),
        resultSays: applied.effects.jobs.map((j) => label(j.runId, j.availableAt)).sort(),
        written: written.map((j) => label(j.run_id!, j.available_at)).sort(),
      }).toEqual({ status: 'applied', previewed: expected, resultSays: expected, written: expected });
    }, 30_000);
  }
});
