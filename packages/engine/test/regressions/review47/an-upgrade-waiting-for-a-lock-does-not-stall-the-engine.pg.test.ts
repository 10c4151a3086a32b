import { rmSync } from 'node:fs';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createDatabase,
  createEngine,
  defineAction,
  defineFlow,
  type Database,
  type Engine,
} from '../../../src/index.ts';
import { migrate } from '../../../src/db/migrate.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { migrationsBefore } from './support/before.ts';

const stepA = defineAction({ name: 'r47-a', run: async (i: { n: number }) => ({ a: i.n }) });
const stepB = defineAction({ name: 'r47-b', run: async (i: { n: number }) => ({ b: i.n }) });
const parked = defineFlow({
  name: 'r47-parked',
  version: 1,
  run: async (ctx) => {
    await ctx.action(stepA, { n: 1 });
    await ctx.awaitSignal('go', { timeoutSeconds: 3600 });
    await ctx.action(stepB, { n: 2 });
    return { done: true };
  },
});

/**
 * Review 47: an upgrade (the next release's start-up migrating the database) while this release's engine
 * has runs in flight on the same real PostgreSQL. migrate() applies every pending migration in one
 * transaction with no lock_timeout: 0030 takes SHARE ROW EXCLUSIVE on flow_runs (CREATE TRIGGER), and that
 * lock is held until the last pending migration commits. When the migration has to wait for a lock (a
 * uncommitted write to repair_approvals for 0031's CREATE INDEX, or an open host transaction that wrote a run), every
 * write of the engine to flow_runs queues behind it for as long as that wait lasts: the engine stalls.
 */
describe('an upgrade waiting for a lock does not stall the running engine (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let url: string;
  let before: string;
  /** The migrations through 0031: the upgrade this scenario is about, whatever later releases add. */
  let through0031: string;
  let engine: Engine;
  const clients: pg.Client[] = [];
  const open: Database[] = [];
  beforeAll(async () => {
    db = await openTestDatabase({ migrated: false });
    url = db.url!;
    before = migrationsBefore('0030_');
    through0031 = migrationsBefore('0032_');
    await migrate(db, { dir: before });
    engine = createEngine({
      db,
      flows: [parked],
      actions: [stepA, stepB],
      config: { worker: { poll_interval_ms: 50 }, logging: { anomaly_level: null } },
      logger: pino({ level: 'silent' }),
    });
    engine.startWorkers();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.end().catch(() => undefined);
    for (const d of open.splice(0)) await d.close().catch(() => undefined);
  });
  afterAll(async () => {
    await engine.stopWorkers(1000);
    await db.close();
    rmSync(before, { recursive: true, force: true });
    rmSync(through0031, { recursive: true, force: true });
  });

  const client = async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    clients.push(c);
    return c;
  };
  const statusOf = async (runId: string) => (await engine.getRun(runId))?.run.status;
  /** A run of this engine parked on its signal: in flight on the old schema. */
  const inFlight = async () => {
    const { runId } = await engine.startFlow(parked, null);
    await waitFor(`run ${runId} to park on its signal`, async () => {
      const d = await engine.getRun(runId);
      return d?.run.status === 'Waiting' ? true : undefined;
    });
    return runId;
  };
  /** Backends of this database waiting for a lock held (or queued ahead) by `pid`. */
  const blockedBy = async (watcher: pg.Client, pid: number) =>
    (
      await watcher.query<{ pid: number; query: string }>(
        `select pid, query from pg_stat_activity where datname = current_database() and $1 = any(pg_blocking_pids(pid))`,
        [pid],
      )
    ).rows;
  /**
   * The engine signals a parked run and starts another while the lock's holder stays open: whether the
   * run completes meanwhile (within 30 s), and the engine's backends seen blocked behind the migrator on
   * the way (a migrator that gives its lock up after a short timeout may block them for that long: what
   * matters is that they get on).
   */
  const engineGetsOn = async (watcher: pg.Client, migratorPid: number, runId: string) => {
    const t0 = Date.now();
    const signalled = engine.signal(runId, 'go');
    const started = engine.startFlow(parked, null);
    const seenBlocked = new Set<string>();
    const completed = await waitFor(
      'the run to complete while the lock is held',
      async () => {
        for (const b of await blockedBy(watcher, migratorPid))
          seenBlocked.add(b.query.replace(/\s+/g, ' ').slice(0, 80));
        return (await statusOf(runId)) === 'Completed' ? true : undefined;
      },
      30_000,
    ).catch(() => false);
    return {
      completed,
      seenBlocked: [...seenBlocked],
      ms: Date.now() - t0,
      pending: Promise.allSettled([signalled, started]),
    };
  };

  it('with a write to repair_approvals uncommitted, the migration waiting at 0031 (after 0030) does not hold up the runs of the engine', async () => {
    const runId = await inFlight();
    // A transaction that has written repair_approvals (an approval recorded by a host's or a tool's
    // transaction, not yet committed) holds ROW EXCLUSIVE on it, as LOCK TABLE takes here.
    const writer = await client();
    await writer.query('begin');
    await writer.query('lock table "sagaflow"."repair_approvals" in row exclusive mode');
    const watcher = await client();

    const upgrader = await createDatabase({ kind: 'postgres', url, poolSize: 1 });
    open.push(upgrader);
    const upgrade = migrate(upgrader, { dir: through0031 });
    // Progress: the migrator has applied 0030 in its transaction and waits for 0031's lock on repair_approvals.
    const migratorPid = await waitFor('the migration to wait for repair_approvals', async () => {
      const r = await watcher.query<{ pid: number }>(
        `select pid from pg_locks where relation = '"sagaflow"."repair_approvals"'::regclass and not granted`,
      );
      return r.rows[0]?.pid;
    });
    const held = await watcher.query<{ mode: string }>(
      `select mode from pg_locks where pid = $1 and relation = '"sagaflow"."flow_runs"'::regclass and granted`,
      [migratorPid],
    );

    const seen = await engineGetsOn(watcher, migratorPid, runId);
    await writer.query('commit');
    expect((await upgrade).applied).toEqual([
      '0030_updated_at_never_before_created_at',
      '0031_repair_approvals_by_target',
    ]);
    await seen.pending;
    // Once the migration is through, the run in flight on the old schema finishes.
    await waitFor('the run to complete after the upgrade', async () =>
      (await statusOf(runId)) === 'Completed' ? true : undefined,
    );
    expect(
      seen.completed,
      `the run did not complete while an unrelated transaction on repair_approvals stayed open: the engine's writes were blocked behind the migrator (which held ${held.rows.map((r) => r.mode).join(', ')} on flow_runs while it waited for repair_approvals); seen blocked: ${seen.seenBlocked.join(' | ')}`,
    ).toBe(true);
  });

  it('with a host transaction that wrote a run still open, the migration queued for flow_runs does not hold up the other runs of the engine', async () => {
    const runId = await inFlight();
    const other = await inFlight();
    const watcher = await client();
    // The database is put back at 0029 for this test's upgrade (the first test applied 0030 and 0031).
    await watcher.query(
      `drop trigger if exists "flow_runs_updated_at_not_before_created_at" on "sagaflow"."flow_runs";
       drop trigger if exists "saga_instances_updated_at_not_before_created_at" on "sagaflow"."saga_instances";
       drop function if exists "sagaflow"."updated_at_not_before_created_at"();
       drop index if exists "sagaflow"."repair_approvals_target_type_target_id_idx";
       delete from "sagaflow"."_prisma_migrations" where migration_name >= '0030_';`,
    );
    // A host transaction carrying an engine write (ADR 0028), not yet committed: it holds ROW EXCLUSIVE on flow_runs.
    const host = await client();
    await host.query('begin');
    await host.query(`update "sagaflow"."flow_runs" set tags = tags where id = $1::uuid`, [other]);

    const upgrader = await createDatabase({ kind: 'postgres', url, poolSize: 1 });
    open.push(upgrader);
    const upgrade = migrate(upgrader, { dir: through0031 });
    const migratorPid = await waitFor('the migration to queue for flow_runs', async () => {
      const r = await watcher.query<{ pid: number }>(
        `select pid from pg_locks where relation = '"sagaflow"."flow_runs"'::regclass and not granted and mode = 'ShareRowExclusiveLock'`,
      );
      return r.rows[0]?.pid;
    });

    const seen = await engineGetsOn(watcher, migratorPid, runId);
    await host.query('commit');
    expect((await upgrade).applied).toContain('0030_updated_at_never_before_created_at');
    await seen.pending;
    await waitFor('the run to complete after the upgrade', async () =>
      (await statusOf(runId)) === 'Completed' ? true : undefined,
    );
    expect(
      seen.completed,
      `the run did not complete while the host transaction stayed open: the engine’s writes queued behind the migration’s CREATE TRIGGER, which waited for it; seen blocked: ${seen.seenBlocked.join(' | ')}`,
    ).toBe(true);
  });
});
