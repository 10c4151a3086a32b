import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { defineAction, defineFlow } from '../src/index.ts';
import { openRunByKeyText, statusInText } from '../src/store/keyed-status.ts';
import { openRunStatuses, terminalRunStatuses } from '../src/store/types.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { waitForBackendsToExit } from './support/wait-for-backends-to-exit.ts';

const step = defineAction({ name: 'keyed.step', run: async (n: number) => n });
const flow = defineFlow({
  name: 'keyed.three-steps',
  version: 1,
  run: async (ctx, n: number) => {
    for (let i = 0; i < 3; i++) await ctx.action(step, n + i).run();
    return n;
  },
});

const child = defineFlow({
  name: 'keyed.child',
  version: 1,
  run: async (ctx, n: number) => ctx.action(step, n).run(),
});
const undo = defineAction({ name: 'keyed.undo', run: async () => null });
/** Fails each input's first attempt. */
const failedOnce = new Set<number>();
const flaky = defineAction({
  name: 'keyed.flaky',
  retry: { maxAttempts: 2, backoff: { initialMs: 1_000, maxMs: 1_000, jitter: false } },
  run: async (n: number) => {
    if (!failedOnce.has(n)) {
      failedOnce.add(n);
      throw new Error('the first attempt fails');
    }
    return n;
  },
});
/** The other statements a run goes through: a compensable step, a child, a timer, a retry, a signal's timeout, a rollback. */
const saga = defineFlow({
  name: 'keyed.saga',
  version: 1,
  run: async (ctx, n: number) => {
    await ctx.action(step, n).compensateWith(undo, () => null);
    await ctx.child(child, n);
    await ctx.sleep(60);
    await ctx.action(flaky, n).run();
    await ctx.awaitSignal('go', { timeoutSeconds: 600 });
    await ctx.compensate();
    return n;
  },
});

/** Runs open elsewhere once the plans are cached: a backlog (an outage downstream, a burst of waits). */
const backlog = 20_000;
/** Finished runs already there when the plans are made. */
const history = 5_000;

/**
 * Entries read from each index of the runs and steps that is not a key (a key finds one row per value:
 * the seeding's foreign-key checks read 25 k entries of flow_runs_pkey), and rows read by sequential
 * scans, over the whole test. Read once every backend of the engine's database has exited, which
 * flushes its counters (a live backend holds them for up to 10 s).
 */
const readsSql = `
  select i.indexrelname as index, i.idx_tup_read::int as read, i.idx_scan::int as scans
    from pg_stat_user_indexes i join pg_index x on x.indexrelid = i.indexrelid
   where i.schemaname = 'sagaflow' and i.relname in ('flow_runs', 'action_runs', 'compensation_runs') and not x.indisunique
  union all
  select 'seq scan of ' || t.relname, t.seq_tup_read::int, t.seq_scan::int
    from pg_stat_user_tables t
   where t.schemaname = 'sagaflow' and t.relname in ('flow_runs', 'action_runs', 'compensation_runs')`;

/**
 * ADR 0098. A run's statements (its start, each step's claim, outcome and transition, a park, a
 * child's start and end, a compensation, its finish) find the run's row and the step's row by their
 * keys. The planner can also reach them through an index of their status (the open runs, the Running
 * steps), the cheapest path by the last ANALYZE's statistics while few runs are open. A plan made
 * then, cached per connection or made again from the same stale statistics, reads every open run
 * for each statement once thousands are open, until an ANALYZE comes: 100 k runs opening at once made
 * a 3-step flow 50 times slower in the bench (156 ms against 3 ms).
 * Here the engine's plans are made on a database of 5 k finished runs with few open (ANALYZE-d, and
 * autovacuum off so nothing analyzes it again), then 20 k runs open at once, half of them running a step and half waiting on a timer,
 * and more flows and sagas run on the same connections. Every entry read from an index that is not
 * a key, and every row read by a sequential scan, over the whole test, is counted: one read of the
 * backlog would be 20 k. Before the change the count was 800 k.
 */
describe('a run is found by its key however many runs are open (PostgreSQL)', () => {
  let t: Awaited<ReturnType<typeof openTestEngine>>;
  let url: string;
  const finished = new Map<string, () => void>();

  const runSagas = async (count: number, from: number) => {
    for (let n = from; n < from + count; n++) expect((await t.runToCompletion(saga, n)).run.status).toBe('Completed');
  };
  const runFlows = async (count: number, from: number) => {
    for (let n = from; n < from + count; n++) {
      const { runId } = await t.engine.startFlow(flow, n);
      await new Promise<void>((resolve) => {
        finished.set(runId, resolve);
      });
    }
  };

  beforeAll(async () => {
    t = await openTestEngine({ flows: [flow, child, saga], actions: [step, undo, flaky] });
    url = (t.db as { url?: string }).url ?? '';
    await t.db.driver.exec(`
      alter table "sagaflow"."flow_runs" set (autovacuum_enabled = false);
      alter table "sagaflow"."action_runs" set (autovacuum_enabled = false);`);
    t.engine.events.on('run.finished', ({ runId }) => {
      finished.get(runId)?.();
      finished.delete(runId);
    });
    t.engine.startWorkers();
  });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await t?.closeAll();
  };
  afterAll(close);

  it("migration 0027's status test says what the statuses say: which are open, which is Running", async () => {
    const runStatuses = [...openRunStatuses, ...terminalRunStatuses];
    const rows = await t.db.driver.query<{ status: string; open: boolean; running: boolean; none: boolean }>(
      `select s as status, ${openRunByKeyText('s')} as open, ${statusInText('s', ['Running'])} as running,
              ${statusInText('s', [])} as none
         from unnest($1::text[]) s`,
      [runStatuses],
    );
    expect(rows.map((r) => r.status)).toEqual(runStatuses);
    for (const r of rows)
      expect(r).toEqual({
        status: r.status,
        open: (openRunStatuses as readonly string[]).includes(r.status),
        running: r.status === 'Running',
        none: false,
      });
  });

  it('flows and sagas after 20 k runs opened read no more than they did before', async () => {
    // A database in use: 5 k finished runs with their steps, analyzed, and few runs open.
    await t.db.driver.exec(`
      with r as (
        insert into "sagaflow"."flow_runs" (id, flow_name, flow_version, status, input, created_at, updated_at,
                                            started_at, finished_at)
        select gen_random_uuid(), 'keyed.history', 1, 'Completed', '{}'::jsonb, now(), now(), now(), now()
          from generate_series(1, ${history})
        returning id)
      insert into "sagaflow"."action_runs" (run_id, sequence, kind, name, input, status, attempts, max_attempts,
                                            started_at, updated_at, finished_at)
      select r.id, 1, 'action', 'keyed.done', '{}'::jsonb, 'Completed', 1, 1, now(), now(), now() from r;
      analyze "sagaflow"."flow_runs";
      analyze "sagaflow"."action_runs";`);
    // Each statement is prepared on each connection it runs on; past five runs its plan is generic.
    await runFlows(40, 0);
    await runSagas(8, 0);
    await t.db.driver.exec(`
      with r as (
        insert into "sagaflow"."flow_runs" (id, flow_name, flow_version, status, input, created_at, updated_at,
                                            started_at)
        select gen_random_uuid(), 'keyed.backlog', 1, case when n % 2 = 0 then 'Running' else 'Waiting' end,
               '{}'::jsonb, now(), now(), now()
          from generate_series(1, ${backlog}) n
        returning id, status)
      insert into "sagaflow"."action_runs" (run_id, sequence, kind, name, input, status, attempts, max_attempts,
                                            claimed_by, started_at, updated_at, wake_at)
      select r.id, 1, case when r.status = 'Running' then 'action' else 'timer' end, 'keyed.elsewhere',
             '{}'::jsonb, r.status, 1, 1, 'gone', now(), now(),
             case when r.status = 'Waiting' then now() + interval '1 day' end
        from r;`);
    await runFlows(5, 200);
    await runSagas(2, 200);

    await close();
    await waitForBackendsToExit(inject('pgAdminUrl'), url);
    const reader = new pg.Client({ connectionString: url });
    await reader.connect();
    try {
      const { rows } = await reader.query<{ index: string; read: number; scans: number }>(readsSql);
      const total = rows.reduce((sum, r) => sum + r.read, 0);
      // An entry counts when the index returns it: a scan whose only condition is on a later column
      // of an index (`id` in (created_at, id)) would walk it all and count the one match. So every
      // index that is not a key must not be scanned at all, but the one that finds a run's children
      // by their parent (its first column). Sequential scans are counted by the rows they read.
      const parents = 'flow_runs_parent_run_id_parent_sequence_idx';
      expect(
        rows
          .filter((r) => r.scans > 0 && r.index !== parents && !r.index.startsWith('seq scan of '))
          .map((r) => r.index),
      ).toEqual([]);
      // 45 flows and 10 sagas read a few entries each (150 in all when written); one read of the backlog is 20 k.
      // The indexes (or sequential scans) that read more than a few flows' worth, named where it fails.
      expect(rows.filter((r) => r.read > 1_000)).toEqual([]);
      expect(total).toBeLessThan(backlog / 2);
    } finally {
      await reader.end();
    }
  });
});
