import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlSession } from '../src/db/database.ts';
import { maintenanceThresholds } from '../src/maintenance/choose-maintenance.ts';
import { openTestEngine } from './support/open-test-engine.ts';
import { order, reserve, runOrders, ship } from './support/maintenance-orders.ts';
import { waitFor } from './support/wait-for.ts';
import { capturingLogger } from './support/capturing-logger.ts';

/** The tables every run rewrites: its job is inserted and deleted per step, its rows updated per transition. */
const hotTables = ['action_runs', 'flow_events', 'flow_runs', 'jobs'] as const;

interface TableStats {
  table: string;
  dead: number;
  reltuples: number;
  last_vacuum: Date | null;
  last_analyze: Date | null;
}

const readStats = (session: SqlSession) =>
  session.query<TableStats>(
    `select s.relname as table, s.n_dead_tup::int as dead, c.reltuples::float8 as reltuples,
            s.last_vacuum, s.last_analyze
       from pg_stat_user_tables s join pg_class c on c.oid = s.relid
      where s.schemaname = 'sagaflow' and s.relname = any($1::text[])
      order by s.relname`,
    [[...hotTables]],
  );

/** Every run's history is whole: two completed actions, its output, and as many events as any other run. */
async function expectHistoryIntact(session: SqlSession, ids: string[], first: number) {
  const rows = await session.query<{ id: string; output: { shipped: number }; actions: number; events: number }>(
    `select r.id, r.output,
            (select count(*)::int from sagaflow.action_runs a where a.run_id = r.id and a.status = 'Completed') as actions,
            (select count(*)::int from sagaflow.flow_events e where e.run_id = r.id) as events
       from sagaflow.flow_runs r where r.id = any($1::uuid[])`,
    [ids],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const events = rows[0]?.events ?? 0;
  expect(events).toBeGreaterThan(0);
  ids.forEach((id, i) => {
    expect(byId.get(id)).toEqual({ id, output: { shipped: (first + i) * 2 }, actions: 2, events });
  });
}

/**
 * PGlite runs PostgreSQL single-user: its autovacuum never runs, so the engine vacuums and analyzes
 * its own tables while its pool runs (ADR 0050). On PostgreSQL: embedded-maintenance.pg.test.ts.
 */
describe('embedded maintenance on PGlite', () => {
  describe('with the loop on', () => {
    let t: Awaited<ReturnType<typeof openTestEngine>>;
    const captured = capturingLogger();
    beforeAll(async () => {
      t = await openTestEngine({
        flows: [order],
        actions: [reserve, ship],
        logger: captured.logger,
        config: { maintenance: { interval_ms: 20 } },
      });
      t.engine.startWorkers();
    });
    afterAll(async () => {
      await t.closeAll();
    });

    it('vacuums and analyzes the hot tables as runs complete, and runs keep completing, history whole, after it', async () => {
      const first = await runOrders(t, 0, 300);
      // Driven by the loop's own progress: every hot table analyzed, the row-churning ones vacuumed,
      // and none left due (the loop caught up with the dead row versions the runs left).
      const caughtUp = await waitFor(
        'the loop to have vacuumed and analyzed the hot tables',
        async () => {
          const stats = await readStats(t.db.driver);
          const done = stats.every(
            (s) =>
              s.last_analyze !== null &&
              s.reltuples >= 0 &&
              (s.table === 'flow_events' || s.last_vacuum !== null) &&
              s.dead <= maintenanceThresholds.vacuum.rows + maintenanceThresholds.vacuum.fraction * s.reltuples,
          );
          return done && stats.length === hotTables.length ? stats : undefined;
        },
        30_000,
      );
      const byTable = new Map(caughtUp.map((s) => [s.table, s]));
      expect(byTable.get('flow_runs')?.reltuples).toBeGreaterThan(0);
      expect(t.engine.maintenance.counters().vacuums).toBeGreaterThanOrEqual(3);
      // Each step is logged on its own: which table, how many dead row versions it had, how long it took.
      const jobsVacuumed = captured.lines.find((l) => l.table === 'jobs' && l.command === 'vacuum-analyze');
      expect(jobsVacuumed).toMatchObject({ component: 'maintenance', dead_tuples: expect.any(Number) as number });
      expect(jobsVacuumed?.dead_tuples).toBeGreaterThan(maintenanceThresholds.vacuum.rows);
      expect(jobsVacuumed?.ms).toEqual(expect.any(Number));

      // The statements planned afresh on the new statistics still do the run's work, with passes going on.
      const passesBefore = t.engine.maintenance.counters().passes;
      const second = await runOrders(t, 300, 100);
      expect(t.engine.maintenance.counters().passes).toBeGreaterThan(passesBefore);
      await expectHistoryIntact(t.db.driver, first, 0);
      await expectHistoryIntact(t.db.driver, second, 300);
      expect(await t.db.prisma.job.count()).toBe(0);
    }, 240_000);

    it('a pass asked for while another runs waits for it, then finds its tables done', async () => {
      // The loop stopped, so the next runs' dead row versions wait for the two passes asked for here.
      await t.engine.maintenance.stop();
      await runOrders(t, 400, 100);
      const [a, b] = await Promise.all([t.engine.maintenance.pass(), t.engine.maintenance.pass()]);
      expect(a.tables.map((x) => x.table)).toContain('jobs');
      expect(b.tables.filter((x) => a.tables.some((y) => y.table === x.table))).toEqual([]);
    }, 240_000);
  });

  describe('with the loop off', () => {
    let t: Awaited<ReturnType<typeof openTestEngine>>;
    beforeAll(async () => {
      t = await openTestEngine({
        flows: [order],
        actions: [reserve, ship],
        config: { maintenance: { enabled: false, interval_ms: 20 } },
      });
      t.engine.startWorkers();
    });
    afterAll(async () => {
      await t.closeAll();
    });

    it('nothing is vacuumed or analyzed: the dead row versions the same runs leave stay', async () => {
      await runOrders(t, 0, 300);
      // A backend's counts reach the statistics when it flushes them (at most about a second later).
      const deadOf = (rows: Awaited<ReturnType<typeof readStats>>) => rows.reduce((sum, r) => sum + Number(r.dead), 0);
      let stats = await readStats(t.db.driver);
      for (let i = 0; i < 300 && deadOf(stats) <= maintenanceThresholds.vacuum.rows; i++) {
        await new Promise((r) => setTimeout(r, 100));
        stats = await readStats(t.db.driver);
      }
      expect(stats.map((s) => [s.table, s.last_vacuum, s.last_analyze])).toEqual(
        hotTables.map((table) => [table, null, null]),
      );
      // What PGlite's idle autovacuum leaves behind, and the loop above clears. Which table holds it
      // depends on timing: runs handed straight to a free slot write no job row at all (ADR 0107), so
      // `jobs` may have none; the runs' own rows are updated at every step.
      expect(deadOf(stats), JSON.stringify(stats.map((s) => [s.table, s.dead]))).toBeGreaterThan(
        maintenanceThresholds.vacuum.rows,
      );
      expect(t.engine.maintenance.counters()).toEqual({ passes: 0, vacuums: 0, analyzes: 0 });
    }, 240_000);
  });
});
