import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction, defineFlow } from '../src/index.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { waitFor } from './support/wait-for.ts';

const step = defineAction({ name: 'entries.step', run: async (n: number) => n });
const flow = defineFlow({
  name: 'entries.three-steps',
  version: 1,
  run: async (ctx, n: number) => {
    for (let i = 0; i < 3; i++) await ctx.action(step, n + i).run();
    return n;
  },
});

/** The indexes migration 0024 made partial on a column the hot path leaves NULL (ADR 0052). */
const mostlyNull = [
  'flow_runs_parent_run_id_parent_sequence_idx',
  'flow_runs_stuck_reason_updated_at_idx',
  'flow_runs_expires_at_idx',
  'flow_runs_business_key_idx',
  'flow_runs_flow_name_business_key_key',
  'action_runs_reclaim_stale_at_idx',
  'action_runs_expires_at_idx',
];

/**
 * Every entry ever written to a B-tree index: the heap pointers on its leaf pages, dead ones
 * included (nothing vacuums these small tables during the test, and a page that never fills is
 * never pruned), each tuple of a posting list counted, the high key left out.
 */
const entriesSql = `
  select coalesce(sum(case when i.tids is null then 1 else cardinality(i.tids) end), 0)::int as entries
    from generate_series(1, (pg_relation_size($1::regclass) / current_setting('block_size')::int)::int - 1) b
   cross join lateral bt_page_stats($1::text, b) s
   cross join lateral bt_page_items($1::text, b) i
   where s.type = 'l' and not (s.btpo_next <> 0 and i.itemoffset = 1)`;

/**
 * Issue 11: a top-level run without business key, deadline or reclaim, run to the end by the
 * workers, writes no entry in an index it has no value for. Counted on the index pages themselves,
 * so a later change that writes one of these columns on the hot path, or a migration that builds
 * one of them whole again, fails here; a run started with a key shows the count works.
 */
describe('the hot path writes no entry in the indexes of columns it leaves NULL (PostgreSQL)', () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  const entries = async (index: string): Promise<number> => {
    const [row] = await t.db.driver.query<{ entries: number }>(entriesSql, [`"sagaflow"."${index}"`]);
    return row?.entries ?? -1;
  };
  const finish = async (runIds: string[]) => {
    for (const runId of runIds)
      await waitFor(`run ${runId} to complete`, async () => {
        const run = await t.db.prisma.flowRun.findUnique({ where: { id: runId }, select: { status: true } });
        return run?.status === 'Completed' ? true : undefined;
      });
  };

  beforeAll(async () => {
    t = await openTestEngine({ flows: [flow], actions: [step] });
    // The tables stay small and unvacuumed, so every entry written stays on its leaf page.
    await t.db.driver.exec(`
      create extension if not exists pageinspect;
      alter table "sagaflow"."flow_runs" set (autovacuum_enabled = false);
      alter table "sagaflow"."action_runs" set (autovacuum_enabled = false);
      alter table "sagaflow"."flow_events" set (autovacuum_enabled = false);`);
    t.engine.startWorkers();
  });
  afterAll(async () => {
    await t?.closeAll();
  });

  it('five 3-step runs: no entry in the mostly-null indexes, one per write in a whole-table one', async () => {
    const runIds: string[] = [];
    for (let n = 0; n < 5; n++) runIds.push((await t.engine.startFlow(flow, n * 10)).runId);
    await finish(runIds);
    for (const index of mostlyNull) expect({ index, entries: await entries(index) }).toEqual({ index, entries: 0 });
    // The finished-runs index has the finish's entry only, not the insert's.
    expect(await entries('flow_runs_finished_at_status_idx')).toBe(5);
    // A whole-table index has one entry per write of the row (no write of these rows is HOT).
    expect(await entries('flow_runs_created_at_id_idx')).toBeGreaterThanOrEqual(10);
    expect(await entries('action_runs_status_updated_at_idx')).toBeGreaterThanOrEqual(30);
    // ADR 0054: an event writes one entry, in the (run_id, id) key, and none in the stuck events' index.
    const [events] = await t.db.driver.query<{ n: number }>(`select count(*)::int as n from "sagaflow"."flow_events"`);
    expect(events?.n).toBe(45);
    const eventIndexes = await t.db.driver.query<{ name: string }>(
      `select c.relname as name from pg_index i join pg_class c on c.oid = i.indexrelid
        where i.indrelid = '"sagaflow"."flow_events"'::regclass`,
    );
    const perIndex = await Promise.all(eventIndexes.map(async (i) => entries(i.name)));
    expect(perIndex.reduce((a, b) => a + b, 0)).toBe(45);
    expect(await entries('flow_events_pkey')).toBe(45);
  });

  it('a run started with a business key has its entries in both business-key indexes', async () => {
    const { runId } = await t.engine.startFlow(flow, 100, { businessKey: 'order-100' });
    await finish([runId]);
    // One per write of the run (its insert and finish, and a mark-active when the start was not handed off).
    expect(await entries('flow_runs_business_key_idx')).toBeGreaterThanOrEqual(2);
    expect(await entries('flow_runs_flow_name_business_key_key')).toBe(await entries('flow_runs_business_key_idx'));
    await expect(t.engine.startFlow(flow, 101, { businessKey: 'order-100' })).rejects.toMatchObject({
      code: 'duplicate_business_key',
    });
  });
});
