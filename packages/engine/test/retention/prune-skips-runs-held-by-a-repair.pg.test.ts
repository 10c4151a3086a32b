import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedHistory } from '../../src/testing/seed-history.ts';
import { countOrphanRows } from '../../src/testing/count-history.ts';
import { openTestEngine } from '../support/open-test-engine.ts';

const day = 86_400_000;

describe('retention never waits for, nor races, a repair in flight (PostgreSQL)', () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [], actions: [] });
    await seedHistory(t.db.driver, { tag: 'old-done', at: new Date(t.clock.now().getTime() - 40 * day), runs: 12 });
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('a run whose row a repair holds locked is skipped, kept whole, and pruned by the next prune', async () => {
    const [held] = await t.db.driver.query<{ id: string }>(
      `select id::text as id from "sagaflow"."flow_runs" where business_key = 'old-done-3'`,
    );
    if (!held) throw new Error('seed missing');
    const during = await t.db.driver.transaction(async (tx) => {
      // What a repair's transaction does first: lock the run's row (lockOpenRun).
      await tx.query(`select id from "sagaflow"."flow_runs" where id = $1::uuid for update`, [held.id]);
      return t.engine.retention.prune({ olderThanSeconds: 30 * 86_400, batchSize: 5 });
    });
    expect(during.deleted.flow_runs).toBe(11);
    const steps = await t.db.driver.query<{ n: number }>(
      `select count(*)::int as n from "sagaflow"."action_runs" where run_id = $1::uuid`,
      [held.id],
    );
    expect(steps[0]?.n).toBe(5);
    expect(await countOrphanRows(t.db.driver)).toBe(0);

    const after = await t.engine.retention.prune({ olderThanSeconds: 30 * 86_400 });
    expect(after.deleted.flow_runs).toBe(1);
    expect(await t.db.prisma.flowRun.count()).toBe(0);
  });
});
