import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countHistoryByTag, countOrphanRows } from '../../../src/testing/count-history.ts';
import { noRetentionRows, retentionTables } from '../../../src/store/retention/retention-tables.ts';
import { openTestEngine } from '../../support/open-test-engine.ts';
import { holdRuns, waitForWaiters } from '../../support/held-rows.ts';
import { seedRetentionScene } from '../../retention/retention-fixture.ts';

const thirtyDays = 30 * 86_400;

/**
 * ADR 0027: "SKIP LOCKED keeps two pruners correct anyway (the CLI beside a scheduled prune)". Prune A
 * takes every old run in one batch and is held mid-batch (its delete of `flow_events` waits on an
 * event row the test holds); prune B starts then. B must not wait for A: it skips A's runs and does
 * the other walks. Released, A finishes. Together they delete exactly what the dry run counted,
 * every run whole, nothing the retention scene keeps; a third prune finds nothing.
 */
describe('two prunes at once, one held mid-batch (PostgreSQL)', () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  beforeAll(async () => {
    t = await openTestEngine({ flows: [], actions: [] });
    await seedRetentionScene(t.db.driver, t.clock.now());
  });
  afterAll(async () => {
    await t.closeAll();
  });

  it('the second skips what the first holds and neither waits; together they delete what the dry run counted', async () => {
    const planned = (await t.engine.retention.preview({ olderThanSeconds: thirtyDays })).rows;
    const before = await countHistoryByTag(t.db.driver);
    const [victim] = await t.db.driver.query<{ id: string }>(
      `select id::text as id from "sagaflow"."flow_runs" where business_key = 'old-done-5'`,
    );
    if (!victim) throw new Error('seed missing');
    const url = (t.db as { url?: string }).url;
    if (!url) throw new Error('needs the PostgreSQL project');
    const held = await holdRuns(url, []);
    await held.client.query(
      `select 1 from "sagaflow"."flow_events" where run_id = $1::uuid order by id desc limit 1 for update`,
      [victim.id],
    );
    const a = t.engine.retention.prune({ olderThanSeconds: thirtyDays, batchSize: 1000 });
    const [waiter] = await waitForWaiters(t.db, held.pid);
    expect(waiter?.query).toMatch(/delete from "sagaflow"."flow_events"/);

    const b = await t.engine.retention.prune({ olderThanSeconds: thirtyDays, batchSize: 3 });
    expect(b.deleted.flow_runs).toBe(0);
    expect(await waitForWaiters(t.db, held.pid)).toHaveLength(1);
    await held.rollback();
    const first = await a;

    const sum = noRetentionRows();
    for (const table of retentionTables) sum[table] = first.deleted[table] + b.deleted[table];
    expect(sum).toEqual(planned);
    expect(await countOrphanRows(t.db.driver)).toBe(0);
    const after = await countHistoryByTag(t.db.driver);
    for (const tag of ['new-done', 'old-open', 'family-open', 'quarantined', 'manual-review'])
      expect(after[`flow_runs:${tag}`] ?? after[`saga_instances:${tag}`]).toBe(
        before[`flow_runs:${tag}`] ?? before[`saga_instances:${tag}`],
      );
    expect((await t.engine.retention.prune({ olderThanSeconds: thirtyDays })).total).toBe(0);
  });
});
