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
 * Review 65, attacking ADR 0136's addendum ("Both plans now list `listCancelReach` … which is what the
 * statements ask") and ARCHITECTURE ("previewed (the transition, compensations and outbox messages it would
 * cause), then applied … with its audit row").
 *
 * Parent P (parked waiter) has open 'propagate' children C1 and C2; C2 has an open 'propagate' child G; an
 * operator cancelled C2 first (C2 and G asked). A `run.expire` repair on P asks C1 only, and writes for it what
 * every cancel request writes: its `run.cancel_requested` event and TWO wake jobs (now, and when its cleanup
 * window closes). Its preview (and the applied answer, which repeats it) names C1's
 * request in `history` but lists in `jobs` only P's own two wakes. The `run.cancel` repair's preview of the same
 * tree lists each asked child's two wakes (the held contrast): the two repairs disagree, and the expire's
 * preview under-states the jobs it queues by two per descendant it asks (a thousand children: 2,000 wakes
 * not shown).
 */
describe(`the expire and cancel repairs preview the wakes they queue (${testDbKind()})`, () => {
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

  async function tree() {
    const [p] = await parkedWaiters(t, [3600]);
    await seedOpenChildren(db, p!, 2);
    const kids = await db.prisma.flowRun.findMany({ where: { parent_run_id: p! }, orderBy: { id: 'asc' } });
    const [c1, c2] = [kids[0]!.id, kids[1]!.id];
    await seedOpenChildren(db, c2, 1);
    const g = (await db.prisma.flowRun.findFirstOrThrow({ where: { parent_run_id: c2 } })).id;
    expect(await t.engine.cancel(c2, { reason: 'operator: not needed' })).toEqual({ requested: true });
    const name = (id: string) => (id === p ? 'P' : id === c1 ? 'C1' : id === c2 ? 'C2' : id === g ? 'G' : id);
    return { p: p!, name };
  }

  async function previewAndApply(kind: 'run.expire' | 'run.cancel', p: string, name: (id: string) => string) {
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: p } });
    const cmd = {
      kind,
      target: { runId: p },
      expected: { runStatus: run.status },
      actor: 'ops@example.test',
      reason: 'review 65',
      idempotencyKey: randomUUID(),
      cleanupSeconds: 600,
    } as RepairCommand;
    const preview = await t.engine.repairs.preview(cmd);
    const before = (await db.prisma.job.findMany({ select: { id: true } })).map((j) => j.id);
    const applied = await t.engine.repairs.apply(cmd);
    const written = await db.prisma.job.findMany({
      where: { kind: 'wake-run', id: { notIn: before } },
      select: { run_id: true },
    });
    const wakes = (runIds: string[]) => runIds.map(name).sort();
    return {
      status: applied.status,
      written: wakes(written.map((j) => j.run_id!)),
      previewed: wakes(preview.effects.jobs.map((j) => j.runId)),
      resultSays: wakes(applied.effects.jobs.map((j) => j.runId)),
    };
  }

  it('run.expire: the wake jobs previewed and reported are the ones queued', async () => {
    const { p, name } = await tree();
    const all = ['C1', 'C1', 'P', 'P'];
    expect(await previewAndApply('run.expire', p, name)).toEqual({
      status: 'applied',
      written: all,
      previewed: all,
      resultSays: all,
    });
  }, 30_000);

  it('held (contrast): run.cancel previews the wakes it queues', async () => {
    const { p, name } = await tree();
    const all = ['C1', 'C1', 'P', 'P'];
    expect(await previewAndApply('run.cancel', p, name)).toEqual({
      status: 'applied',
      written: all,
      previewed: all,
      resultSays: all,
    });
  }, 30_000);
});
