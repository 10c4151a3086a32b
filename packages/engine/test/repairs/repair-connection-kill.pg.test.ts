import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { EngineError, type RepairCommand } from '../../src/index.ts';
import { seedStep } from '../support/seed-step.ts';
import { waitFor } from '../support/wait-for.ts';
import { settle, useRaceEngines, who } from './support/race-engines.ts';
import { snapshotTables } from './support/snapshot.ts';

/** A repair whose connection is killed while it applies leaves nothing behind (issue 9; support/race-engines.ts). */
describe("a repair's connection killed mid-apply (real PostgreSQL)", () => {
  const engines = useRaceEngines();

  it('a connection killed while apply waits for the run lock leaves neither the change nor an audit row', async () => {
    const { first, operator } = engines;
    const { runId } = await seedStep(first);
    const holder = new pg.Client({ connectionString: first.url });
    const killer = new pg.Client({ connectionString: first.url });
    await holder.connect();
    await killer.connect();
    try {
      await holder.query('begin');
      await holder.query('select id from "sagaflow"."flow_runs" where id = $1 for update', [runId]);
      const holderPid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      const before = await snapshotTables(first);
      const cmd = {
        kind: 'run.terminate',
        target: { runId },
        expected: { runStatus: 'Pending' },
        ...who,
        idempotencyKey: `killed-${runId}`,
      } as RepairCommand;
      const applying = settle(operator.repairs.apply(cmd));
      // Progress: the repair's backend is waiting for the lock the holder has.
      const pid = await waitFor('the repair waiting on the run lock', async () => {
        const rows = await killer.query<{ pid: number }>(
          `select pid from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and pid <> $1 and query ilike '%flow_runs%'`,
          [holderPid],
        );
        return rows.rows[0]?.pid;
      });
      await killer.query('select pg_terminate_backend($1)', [pid]);
      const outcome = await applying;
      expect(outcome.ok, 'apply failed with its connection').toBe(false);
      expect(outcome.ok ? null : outcome.error).not.toBeInstanceOf(EngineError);
      await holder.query('rollback');
      expect(await snapshotTables(first), 'neither the change nor an audit row').toEqual(before);
      // Nothing was recorded under the key: the same command applies now, once.
      const applied = await operator.repairs.apply(cmd);
      expect(applied).toMatchObject({ status: 'applied', replayed: false });
      expect((await first.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe('Terminated');
    } finally {
      await holder.end();
      await killer.end();
    }
  });

  it('a connection killed mid-apply, after the change and before its audit row, leaves neither', async () => {
    const { first, operator } = engines;
    const { runId } = await seedStep(first);
    const holder = new pg.Client({ connectionString: first.url });
    const killer = new pg.Client({ connectionString: first.url });
    await holder.connect();
    await killer.connect();
    try {
      const before = await snapshotTables(first);
      // SHARE mode lets the repair read the audit table (its idempotency check) but not insert into
      // it: the repair locks, checks and terminates the run, appends its history, then waits here.
      await holder.query('begin');
      await holder.query('lock table "sagaflow"."repair_commands" in share mode');
      const holderPid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      const cmd = {
        kind: 'run.terminate',
        target: { runId },
        expected: { runStatus: 'Pending' },
        ...who,
        idempotencyKey: `killed-mid-${runId}`,
      } as RepairCommand;
      const applying = settle(operator.repairs.apply(cmd));
      const pid = await waitFor('the repair waiting to write its audit row', async () => {
        const rows = await killer.query<{ pid: number }>(
          `select pid from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and pid <> $1
              and query ilike '%repair_commands%'`,
          [holderPid],
        );
        return rows.rows[0]?.pid;
      });
      // The change itself is in: the run row is Terminated in the repair's own (uncommitted) view.
      const locks = await killer.query<{ n: number }>(
        `select count(*)::int as n from pg_locks l join pg_class c on c.oid = l.relation
          where l.pid = $1 and c.relname = 'flow_runs' and l.mode = 'RowExclusiveLock'`,
        [pid],
      );
      expect(locks.rows[0]?.n, 'the repair had written to flow_runs before it was killed').toBeGreaterThan(0);
      await killer.query('select pg_terminate_backend($1)', [pid]);
      const outcome = await applying;
      expect(outcome.ok, 'apply failed with its connection').toBe(false);
      await holder.query('rollback');
      expect(await snapshotTables(first), 'neither the change nor an audit row').toEqual(before);
      const applied = await operator.repairs.apply(cmd);
      expect(applied).toMatchObject({ status: 'applied', replayed: false });
    } finally {
      await holder.end();
      await killer.end();
    }
  });
});
