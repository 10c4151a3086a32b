import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { migrationsDir } from '../src/db/migrations-dir.ts';
import { EngineError } from '../src/errors/engine-error.ts';
import { openTestDatabase } from './support/test-database.ts';
import { waitFor } from './support/wait-for.ts';

/**
 * ADR 0123: a migration waits at most lock_timeout for each lock, is rolled back and tried again after a
 * backoff while a transaction holds what it needs, names that session in its warnings and in its final
 * error, and never times out while it waits for another migrator.
 */
describe('migrate waits for locks in bounded attempts (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let dir: string;
  const clients: pg.Client[] = [];
  beforeAll(async () => {
    db = await openTestDatabase({ migrated: false });
    await migrate(db);
    await db.driver.exec('create table "sagaflow"."mig_lock_target" (id int)');
    dir = mkdtempSync(join(tmpdir(), 'sagaflow-migrate-locks-'));
    cpSync(migrationsDir, dir, { recursive: true });
    mkdirSync(join(dir, '9301_needs_the_table'));
    // ADD COLUMN takes ACCESS EXCLUSIVE: it conflicts with any open transaction that read the table.
    writeFileSync(
      join(dir, '9301_needs_the_table', 'migration.sql'),
      'alter table "sagaflow"."mig_lock_target" add column x int;',
    );
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.end().catch(() => undefined);
    await db.driver.exec(`delete from "sagaflow"."_prisma_migrations" where migration_name = '9301_needs_the_table';
      alter table "sagaflow"."mig_lock_target" drop column if exists x;`);
  });
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A session named `r47-holder` in an open transaction that read the table (ACCESS SHARE, held until it ends). */
  const holder = async () => {
    const c = new pg.Client({ connectionString: db.url, application_name: 'r47-holder' });
    await c.connect();
    clients.push(c);
    await c.query('begin');
    await c.query('select * from "sagaflow"."mig_lock_target"');
    const pid = (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    return { c, pid };
  };
  const capture = () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { level: 'warn' },
      { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) },
    );
    return { lines, logger };
  };
  const applied = async () =>
    (
      await db.driver.query<{ n: number }>(
        `select count(*)::int as n from "sagaflow"."_prisma_migrations" where migration_name = '9301_needs_the_table'`,
      )
    )[0]!.n;

  it('gives up after its bound with an error naming the migration and the session holding the lock; nothing of it applied', async () => {
    const { pid } = await holder();
    const { lines, logger } = capture();
    const t0 = Date.now();
    const err = await migrate(db, { dir, logger, locks: { lockTimeoutMs: 20, giveUpAfterMs: 1500 } }).catch(
      (e: unknown) => e,
    );
    const took = Date.now() - t0;
    expect(err).toBeInstanceOf(EngineError);
    expect((err as EngineError).code).toBe('migration_lock_timeout');
    expect((err as EngineError).retryable).toBe(true);
    const message = (err as EngineError).message;
    expect(message).toContain('9301_needs_the_table');
    expect(message).toContain(`pid ${pid}`);
    expect(message).toContain('"r47-holder"');
    expect(message).toContain('sagaflow.mig_lock_target AccessShareLock');
    expect(message).toContain('pg_terminate_backend');
    // Bounded: it gave up near its bound, not after the holder ended (it never does here).
    expect(took).toBeLessThan(10_000);
    const warns = lines.filter(
      (l) => l.msg === 'migration could not take a lock within lock_timeout; rolled back, retrying',
    );
    expect(warns.length).toBeGreaterThanOrEqual(1);
    expect(warns[0]).toMatchObject({
      migration: '9301_needs_the_table',
      attempt: 1,
      lockTimeoutMs: 20,
      sqlstate: '55P03',
    });
    expect((warns[0]!.holders as { pid: number; application_name: string }[])[0]).toMatchObject({
      pid,
      application_name: 'r47-holder',
    });
    expect(lines.some((l) => l.msg === 'migration could not take its locks; giving up')).toBe(true);
    expect(await applied()).toBe(0);
  });

  it('applies the migration once the holder ends, without queueing again while it is still open', async () => {
    const { c, pid } = await holder();
    const { lines, logger } = capture();
    const watcher = new pg.Client({ connectionString: db.url });
    await watcher.connect();
    clients.push(watcher);
    const run = migrate(db, { dir, logger, locks: { lockTimeoutMs: 20, giveUpAfterMs: 60_000 } });
    // Progress: the first attempt timed out and the runner is waiting for the holder to end.
    await waitFor('a retry to be logged', async () => (lines.length > 0 ? true : undefined));
    // While it waits for the holder, it is not in the lock queue: nothing can be blocked behind it.
    const queued = await watcher.query<{ n: number }>(
      `select count(*)::int as n from pg_locks where relation = '"sagaflow"."mig_lock_target"'::regclass and not granted`,
    );
    expect(queued.rows[0]!.n).toBe(0);
    expect((lines[0]!.holders as { pid: number }[]).map((h) => h.pid)).toContain(pid);
    await c.query('commit');
    const result = await run;
    expect(result.applied).toEqual(['9301_needs_the_table']);
    expect(await applied()).toBe(1);
  });

  it('waiting for another migrator is not a lock timeout: it waits as long as that migrator runs', async () => {
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    clients.push(other);
    await other.query('select pg_advisory_lock($1)', [0x5a6a_f10e]);
    let settled = false;
    const run = migrate(db, { dir, locks: { lockTimeoutMs: 20, giveUpAfterMs: 200 } }).finally(() => {
      settled = true;
    });
    await waitFor('the migrator to wait for the advisory lock', async () => {
      const r = await other.query<{ n: number }>(
        `select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`,
      );
      return r.rows[0]!.n > 0 ? true : undefined;
    });
    // Well past both its lock_timeout and its give-up bound, it is still waiting, not failed.
    const since = Date.now();
    await waitFor('a second to pass', async () => (Date.now() - since > 1000 || settled ? true : undefined));
    expect(settled).toBe(false);
    await other.query('select pg_advisory_unlock($1)', [0x5a6a_f10e]);
    expect((await run).applied).toEqual(['9301_needs_the_table']);
  });
});
