import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { migrate } from '../../../src/db/migrate.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { spawnWorker, type ChildWorker } from '../../support/spawn-worker.ts';
import { waitFor } from '../../support/wait-for.ts';
import { migrationsBefore, migrationsDir } from './support/before.ts';
import { readdirSync } from 'node:fs';

const child = fileURLToPath(new URL('./support/migrate-child.ts', import.meta.url));
const shipped = readdirSync(migrationsDir).filter((n) => /^\d{4}_/.test(n));
const rows = 50_000;

/**
 * Review 47: upgrades by real processes on a real PostgreSQL: two starting at once (an empty database and
 * one at 0029 with rows), and one SIGKILLed while its migration is under way.
 */
describe('two upgraders at once, and an upgrader killed mid-way (real PostgreSQL, real processes)', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  });
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const fresh = async (at: 'empty' | '0029 with rows') => {
    const db = await openTestDatabase({ migrated: false });
    cleanups.push(() => db.close());
    if (at !== 'empty') {
      const before = migrationsBefore('0030_');
      dirs.push(before);
      await migrate(db, { dir: before });
      await db.driver.exec(`
        insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, created_at, updated_at)
        select 'seeded', 1, 'Completed', jsonb_build_object('n', g), now() - make_interval(secs => g),
               now() - make_interval(secs => g) + case when g % 7 = 0 then interval '-2 seconds' else interval '1 second' end
          from generate_series(1, ${rows}) g;`);
    }
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    cleanups.push(() => c.end());
    return { db, c, url: db.url! };
  };
  const spawnMigrator = async (url: string) => {
    let proc: ChildWorker['proc'] | undefined;
    cleanups.push(async () => proc?.kill('SIGKILL'));
    return spawnWorker(child, url, (p) => (proc = p));
  };
  const bookkeeping = async (c: pg.Client) =>
    (
      await c.query<{ migration_name: string; n: number; finished: number }>(
        `select migration_name, count(*)::int as n, count(finished_at)::int as finished
           from "sagaflow"."_prisma_migrations" group by migration_name order by migration_name`,
      )
    ).rows;
  const advisoryWaiters = async (c: pg.Client) =>
    (
      await c.query<{ n: number }>(
        `select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`,
      )
    ).rows[0]!.n;

  for (const at of ['empty', '0029 with rows'] as const) {
    it(`held: two processes upgrading a database (${at}) at once both succeed, each migration is applied and recorded once`, async () => {
      const { c, url } = await fresh(at);
      // The test holds the migrators' lock so that both reach it before either goes on: then it lets them race.
      await c.query('select pg_advisory_lock($1)', [0x5a6a_f10e]);
      const a = await spawnMigrator(url);
      const b = await spawnMigrator(url);
      await waitFor('both migrators to wait at the lock', async () =>
        (await advisoryWaiters(c)) >= 2 ? true : undefined,
      );
      await c.query('select pg_advisory_unlock($1)', [0x5a6a_f10e]);
      const outA = (await a.printed(/^(applied|failed) (.*)$/m, 60_000))[0];
      const outB = (await b.printed(/^(applied|failed) (.*)$/m, 60_000))[0];
      expect([outA, outB].every((o) => o.startsWith('applied'))).toBe(true);
      const applied = [outA, outB].map(
        (o) => (JSON.parse(o.slice('applied '.length)) as { applied: string[] }).applied,
      );
      expect(applied.flat().sort()).toEqual(at === 'empty' ? shipped : shipped.filter((n) => n >= '0030_'));
      const rowsNow = await bookkeeping(c);
      expect(rowsNow.map((r) => r.migration_name)).toEqual(shipped);
      expect(rowsNow.every((r) => r.n === 1 && r.finished === 1)).toBe(true);
      expect(
        (
          await c.query<{ n: number }>(
            `select count(*)::int as n from "sagaflow"."flow_runs" where updated_at < created_at`,
          )
        ).rows[0]!.n,
      ).toBe(0);
    }, 120_000);
  }

  // Fix 47 (ADR 0123): each migration commits on its own, so an upgrader killed while 0031 waits leaves
  // 0030 applied whole and recorded, and nothing of 0031; the original held test asserted the old
  // grouping (neither recorded). The next test kills one inside a migration's own transaction.
  it('held: an upgrader SIGKILLed while 0031 waits leaves 0030 whole and recorded once and nothing of 0031; the next start applies 0031 once', async () => {
    const { c, url } = await fresh('0029 with rows');
    // An uncommitted write to repair_approvals keeps the migrator at 0031, after 0030's trigger and backfill.
    const blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    cleanups.push(() => blocker.end());
    await blocker.query('begin');
    await blocker.query('lock table "sagaflow"."repair_approvals" in row exclusive mode');
    const m = await spawnMigrator(url);
    const pid = await waitFor('the migrator to wait at 0031', async () => {
      const r = await c.query<{ pid: number }>(
        `select pid from pg_locks where relation = '"sagaflow"."repair_approvals"'::regclass and not granted`,
      );
      return r.rows[0]?.pid;
    });
    expect(await m.kill()).toBe('SIGKILL');
    const at0030 = shipped.filter((n) => n < '0031_');
    expect((await bookkeeping(c)).map((r) => r.migration_name)).toEqual(at0030);
    const stillThere = async () =>
      (await c.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where pid = $1`, [pid])).rows[0]!
        .n;
    const orphaned = await stillThere();
    await blocker.query('commit');
    await waitFor('the killed migrator’s backend to end', async () => ((await stillThere()) === 0 ? true : undefined));
    expect((await bookkeeping(c)).map((r) => r.migration_name)).toEqual(at0030);
    expect(
      (
        await c.query<{ n: number }>(
          `select count(*)::int as n from pg_indexes where indexname = 'repair_approvals_target_type_target_id_idx'`,
        )
      ).rows[0]!.n,
    ).toBe(0);
    expect(
      (
        await c.query<{ n: number }>(
          `select count(*)::int as n from "sagaflow"."flow_runs" where updated_at < created_at`,
        )
      ).rows[0]!.n,
    ).toBe(0);
    const next = await spawnMigrator(url);
    const out = (await next.printed(/^(applied|failed) (.*)$/m, 60_000))[0];
    expect(out).toMatch(/^applied /);
    expect((JSON.parse(out.slice('applied '.length)) as { applied: string[] }).applied).toEqual(
      shipped.filter((n) => n >= '0031_'),
    );
    const after = await bookkeeping(c);
    expect(after.map((r) => r.migration_name)).toEqual(shipped);
    expect(after.every((r) => r.n === 1 && r.finished === 1)).toBe(true);
    expect(
      (
        await c.query<{ n: number }>(
          `select count(*)::int as n from pg_trigger where tgname like '%updated_at_not_before_created_at'`,
        )
      ).rows[0]!.n,
    ).toBe(2);
    console.log(
      `review47: the SIGKILLed migrator's backend was ${orphaned ? 'still alive' : 'gone'} right after the kill`,
    );
  }, 120_000);

  it("held (fix 47): an upgrader SIGKILLed inside a migration's own transaction leaves nothing of it, and its backend notices the dead client within seconds", async () => {
    const { c, url } = await fresh('empty');
    // The shipped migrations plus one that creates a table and then runs for a minute: killed mid-way.
    const dir = migrationsBefore('9999_');
    dirs.push(dir);
    mkdirSync(join(dir, '9001_slow'));
    writeFileSync(
      join(dir, '9001_slow', 'migration.sql'),
      'create table "sagaflow"."r47_slow_probe" (id int);\nselect pg_sleep(60);',
    );
    const m = await spawnWorker(child, url, (p) => cleanups.push(async () => p.kill('SIGKILL')), [dir]);
    const pid = await waitFor(
      'the migrator to run 9001_slow',
      async () => {
        const r = await c.query<{ pid: number }>(
          `select pid from pg_stat_activity where state = 'active' and query like '%pg_sleep(60)%' and pid <> pg_backend_pid()`,
        );
        return r.rows[0]?.pid;
      },
      60_000,
    );
    expect((await bookkeeping(c)).map((r) => r.migration_name)).toEqual(shipped);
    expect(await m.kill()).toBe('SIGKILL');
    const killedAt = Date.now();
    // client_connection_check_interval (1 s) on the migrating session: the backend ends long before its minute.
    await waitFor(
      'the killed migrator’s backend to end',
      async () =>
        (await c.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where pid = $1`, [pid])).rows[0]!
          .n === 0
          ? true
          : undefined,
      30_000,
    );
    expect(Date.now() - killedAt).toBeLessThan(30_000);
    expect((await bookkeeping(c)).map((r) => r.migration_name)).toEqual(shipped);
    expect(
      (await c.query<{ t: string | null }>(`select to_regclass('"sagaflow"."r47_slow_probe"')::text as t`)).rows[0]!.t,
    ).toBeNull();
    console.log(`review47: the SIGKILLed migrator's backend ended ${Date.now() - killedAt} ms after the kill`);
  }, 120_000);

  it('an upgrader SIGKILLed while its migration waits for a lock lets go of flow_runs: the engine is not left stalled behind a dead process', async () => {
    const { c, url } = await fresh('0029 with rows');
    const blocker = new pg.Client({ connectionString: url });
    await blocker.connect();
    cleanups.push(() => blocker.end());
    await blocker.query('begin');
    await blocker.query('lock table "sagaflow"."repair_approvals" in row exclusive mode');
    const m = await spawnMigrator(url);
    const pid = await waitFor('the migrator to wait at 0031', async () => {
      const r = await c.query<{ pid: number }>(
        `select pid from pg_locks where relation = '"sagaflow"."repair_approvals"'::regclass and not granted`,
      );
      return r.rows[0]?.pid;
    });
    // The operator gives up on the upgrade (or the orchestrator kills the new release): SIGKILL.
    expect(await m.kill()).toBe('SIGKILL');
    const killedAt = Date.now();
    const heldOnFlowRuns = async () =>
      (
        await c.query<{ mode: string }>(
          `select mode from pg_locks where pid = $1 and relation = '"sagaflow"."flow_runs"'::regclass and granted`,
          [pid],
        )
      ).rows.map((r) => r.mode);
    // Progress: the dead process's backend lets go, or it is still there holding flow_runs after a bound.
    const left = await waitFor(
      'the killed migrator’s backend to let go of flow_runs, or 15 s',
      async () => {
        const modes = await heldOnFlowRuns();
        if (modes.length === 0) return { modes, gone: true };
        return Date.now() - killedAt > 15_000 ? { modes, gone: false } : undefined;
      },
      30_000,
    );
    await blocker.query('commit');
    expect(
      left,
      `15 s after its process was SIGKILLed, backend ${pid} still holds ${left.modes.join(', ')} on flow_runs (every write of the engine to flow_runs waits behind it) for as long as the lock it waits for is held`,
    ).toEqual({ modes: [], gone: true });
  }, 120_000);
});
