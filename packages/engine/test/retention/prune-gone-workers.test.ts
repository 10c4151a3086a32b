import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestEngine } from '../support/open-test-engine.ts';
import { seedStep } from '../support/seed-step.ts';
import { testDbKind } from '../support/test-database.ts';

const day = 86_400;

/**
 * Every worker pool writes a row (ADR 0010), and every process start or `startWorkers()` after a stop
 * adds one: retention deletes the rows of pools gone before its cutoff, and keeps the row of a pool a
 * Running step or compensation still names, since that row is what says at once that its owner is gone.
 */
describe(`retention deletes the rows of long-gone worker pools and no other (${testDbKind()})`, () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  const ago = (days: number) => `now() - interval '${days} days'`;
  const workers = async () =>
    (await t.db.prisma.$queryRaw<{ id: string }[]>`select id from "sagaflow"."workers" order by id`).map((r) => r.id);

  beforeAll(async () => {
    t = await openTestEngine({ flows: [], actions: [] });
    await t.db.prisma.$executeRawUnsafe(`
      insert into "sagaflow"."workers" (id, started_at, heartbeat_at, stopped_at) values
        ('w-old-stopped', ${ago(60)}, ${ago(45)}, ${ago(45)}),
        ('w-old-silent', ${ago(60)}, ${ago(40)}, null),
        ('w-old-owner-of-a-running-step', ${ago(60)}, ${ago(50)}, ${ago(50)}),
        ('w-old-owner-of-a-running-compensation', ${ago(60)}, ${ago(50)}, ${ago(50)}),
        ('w-old-owner-of-a-finished-step', ${ago(60)}, ${ago(50)}, ${ago(50)}),
        ('w-recently-stopped', ${ago(60)}, ${ago(2)}, ${ago(2)}),
        ('w-alive-since-long-ago', ${ago(60)}, now(), null),
        ('w-stopped-long-ago-beating-again', ${ago(60)}, now(), null)`);
    const running = await seedStep(t.db);
    await t.db.prisma.$executeRaw`
      update "sagaflow"."action_runs" set status = 'Running', claimed_by = 'w-old-owner-of-a-running-step'
       where id = ${running.id}::uuid`;
    const finished = await seedStep(t.db);
    await t.db.prisma.$executeRaw`
      update "sagaflow"."action_runs" set status = 'Completed', claimed_by = 'w-old-owner-of-a-finished-step'
       where id = ${finished.id}::uuid`;
    await t.db.prisma.$executeRaw`
      insert into "sagaflow"."compensation_runs"
        (id, run_id, action_sequence, rollback_level, ordinal, name, status, input, claimed_by)
      values (gen_random_uuid(), ${running.runId}::uuid, 1, 1, 0, 'undo', 'Running', '{}'::jsonb,
              'w-old-owner-of-a-running-compensation')`;
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('a dry run counts them, a prune deletes exactly them, and a second prune finds nothing', async () => {
    const before = await workers();
    const preview = await t.engine.retention.preview({ olderThanSeconds: 30 * day });
    expect(preview.rows.workers).toBe(3);
    expect(await workers()).toEqual(before);

    const phases = new Set<string>();
    const report = await t.engine.retention.prune({ olderThanSeconds: 30 * day, batchSize: 2 }, (p) =>
      phases.add(p.phase),
    );
    expect(report.deleted.workers).toBe(3);
    expect(report.complete).toBe(true);
    expect(phases.has('workers')).toBe(true);
    const gone = ['w-old-owner-of-a-finished-step', 'w-old-silent', 'w-old-stopped'];
    expect(before.filter((id) => !gone.includes(id))).toEqual(await workers());
    expect(await workers()).toEqual(
      expect.arrayContaining([
        'w-old-owner-of-a-running-step',
        'w-old-owner-of-a-running-compensation',
        'w-recently-stopped',
        'w-alive-since-long-ago',
        'w-stopped-long-ago-beating-again',
      ]),
    );

    const again = await t.engine.retention.prune({ olderThanSeconds: 30 * day });
    expect(again.deleted.workers).toBe(0);
  });
});
