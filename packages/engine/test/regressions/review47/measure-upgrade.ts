/**
 * Review 47, measurements only (not a test: run by hand, figures go to RESULTS.md).
 *
 *   cd packages/engine && npx tsx --conditions=@sagaflow/source test/regressions/review47/measure-upgrade.ts [rows]
 *
 * 1. A database at migration 0029 with `rows` flow_runs (and rows/5 saga_instances), seeded with
 *    generate_series, is migrated to the latest while a second connection (a writer doing the update an
 *    engine's transition does) updates one run as soon as the migrator holds its lock on flow_runs
 *    (progress: pg_locks). Reports how long the migration ran, how long it held flow_runs, and how long
 *    the writer waited (and the lock it waited for, read from pg_locks while it waited).
 * 2. The hot-path cost of 0030's trigger: N single-row updates of flow_runs as markRunActive writes them,
 *    with the trigger and with it dropped, alternating rounds on the same database.
 */
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDatabase as createPgDatabase, getTestCluster, uniqueDatabaseName } from '@sagaflow/test-postgres';
import pg from 'pg';
import { createDatabase } from '../../../src/db/create-database.ts';
import { migrate } from '../../../src/db/migrate.ts';

const migrationsDir = fileURLToPath(new URL('../../../../../prisma/migrations', import.meta.url));
const rows = Number(process.argv[2] ?? 300_000);
const skewedEvery = Number(process.argv[3] ?? 0); // every k-th row written with updated_at < created_at (0: none)

function dirBefore(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'r47-mig-'));
  for (const n of readdirSync(migrationsDir).filter((x) => /^\d{4}_/.test(x) && x < name))
    cpSync(join(migrationsDir, n), join(dir, n), { recursive: true });
  return dir;
}

async function main() {
  const cluster = await getTestCluster();
  const url = await createPgDatabase(cluster.adminUrl, uniqueDatabaseName('r47m'));
  const db = await createDatabase({ kind: 'postgres', url, poolSize: 2 });
  const before = dirBefore('0030_');
  await migrate(db, { dir: before });
  const t = performance.now();
  await db.driver.exec(`
    insert into "sagaflow"."flow_runs" (id, flow_name, flow_version, status, input, output, created_at, updated_at, started_at, finished_at)
    select gen_random_uuid(), 'seeded-' || (g % 20), 1, case when g % 50 = 0 then 'Running' else 'Completed' end,
           jsonb_build_object('order', g, 'pad', repeat('x', 200)), '{"ok":true}'::jsonb,
           now() - make_interval(secs => g), now() - make_interval(secs => g) ${skewedEvery ? `- case when g % ${skewedEvery} = 0 then interval '1 second' else interval '-1 second' end` : "+ interval '1 second'"},
           now() - make_interval(secs => g), case when g % 50 = 0 then null else now() - make_interval(secs => g) + interval '1 second' end
      from generate_series(1, ${rows}) g;
    insert into "sagaflow"."saga_instances" (process_name, correlation_key, current_state, created_at, updated_at)
    select 'seeded', 'k' || g, 'Open', now() - make_interval(secs => g), now() - make_interval(secs => g) + interval '1 second'
      from generate_series(1, ${Math.floor(rows / 5)}) g;`);
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query('vacuum analyze "sagaflow"."flow_runs"');
  await admin.query('vacuum analyze "sagaflow"."saga_instances"');
  await admin.end();
  const size = await db.driver.query<{ s: string }>(
    `select pg_size_pretty(pg_total_relation_size('"sagaflow"."flow_runs"')) as s`,
  );
  console.log(
    `seeded ${rows} flow_runs (${size[0]?.s}), ${Math.floor(rows / 5)} saga_instances in ${Math.round(performance.now() - t)} ms; skewed every ${skewedEvery || 'none'}`,
  );

  const running = await db.driver.query<{ id: string }>(
    `select id::text from "sagaflow"."flow_runs" where status = 'Running' limit 1`,
  );
  const runId = running[0]!.id;

  const writer = new pg.Client({ connectionString: url });
  const watcher = new pg.Client({ connectionString: url });
  await writer.connect();
  await watcher.connect();
  const writerPid = (await writer.query<{ p: number }>('select pg_backend_pid() as p')).rows[0]!.p;

  const migStart = performance.now();
  let migEnd = 0;
  const migration = migrate(db).then((r) => {
    migEnd = performance.now();
    return r;
  });
  // Progress: the migrator's backend holds a lock on flow_runs other than a plain reader's.
  let heldAt = 0;
  let mode = '';
  for (;;) {
    const l = await watcher.query<{ mode: string }>(
      `select l.mode from pg_locks l where l.relation = '"sagaflow"."flow_runs"'::regclass and l.granted and l.pid <> $1 and l.mode in ('ShareRowExclusiveLock','ExclusiveLock','AccessExclusiveLock','ShareLock')`,
      [writerPid],
    );
    if (l.rows.length > 0) {
      heldAt = performance.now();
      mode = l.rows.map((r) => r.mode).join(',');
      break;
    }
    if (migEnd) break;
  }
  const wStart = performance.now();
  let wEnd = 0;
  const write = writer
    .query(
      `update "sagaflow"."flow_runs" set status = 'Running', updated_at = now(), version = version + 1 where id = $1::uuid`,
      [runId],
    )
    .then(() => (wEnd = performance.now()));
  let waitedFor = '';
  let sawWaiting = false;
  while (!wEnd) {
    const w = await watcher.query<{ mode: string; wait_event_type: string; wait_event: string }>(
      `select l.mode, a.wait_event_type, a.wait_event from pg_locks l join pg_stat_activity a on a.pid = l.pid where l.pid = $1 and not l.granted`,
      [writerPid],
    );
    if (w.rows.length > 0 && !sawWaiting) {
      sawWaiting = true;
      const r = w.rows[0]!;
      waitedFor = `${r.mode} (${r.wait_event_type}/${r.wait_event})`;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  const applied = await migration;
  await write;
  console.log(
    `migrate 0029 -> latest applied ${applied.applied.join(', ')}: total ${Math.round(migEnd - migStart)} ms; flow_runs held (${mode}) from ${Math.round(heldAt - migStart)} ms to commit: ${Math.round(migEnd - heldAt)} ms`,
  );
  console.log(
    `writer update of one run issued once the lock was held: waited ${Math.round(wEnd - wStart)} ms (${sawWaiting ? `seen waiting in pg_locks for ${waitedFor}` : 'never seen waiting'}); returned ${Math.round(wEnd - migEnd)} ms after the migration committed`,
  );

  // 2. The trigger's cost on the hot path.
  const n = Number(process.env.R47_UPDATES ?? 20_000);
  const ids = (
    await db.driver.query<{ id: string }>(
      `select id::text from "sagaflow"."flow_runs" where status = 'Running' limit 500`,
    )
  ).map((r) => r.id);
  const round = async () => {
    const s = performance.now();
    for (let i = 0; i < n; i++) {
      await writer.query({
        name: 'r47-mark-active',
        text: `with upd as (update "sagaflow"."flow_runs" r set status = $2, waiting_for = null, stuck_reason = null, started_at = coalesce(r.started_at, $3::timestamptz), updated_at = $3::timestamptz, version = r.version + 1 from (select id, status as was from "sagaflow"."flow_runs" where id = $1::uuid for no key update) prev where r.id = prev.id returning r.id, prev.was, r.version) select was, version from upd`,
        values: [ids[i % ids.length], 'Running', new Date()],
      });
    }
    return performance.now() - s;
  };
  const dropSql = `drop trigger "flow_runs_updated_at_not_before_created_at" on "sagaflow"."flow_runs"`;
  const createSql = `create trigger "flow_runs_updated_at_not_before_created_at" before insert or update on "sagaflow"."flow_runs" for each row when (NEW."updated_at" < NEW."created_at") execute function "sagaflow"."updated_at_not_before_created_at"()`;
  await round(); // warm
  const withT: number[] = [];
  const withoutT: number[] = [];
  for (let k = 0; k < 4; k++) {
    withT.push(await round());
    await watcher.query(dropSql);
    withoutT.push(await round());
    await watcher.query(createSql);
  }
  const us = (ms: number) => ((ms * 1000) / n).toFixed(1);
  console.log(`${n} single-row updates per round (markRunActive's statement, one connection, autocommit)`);
  console.log(`  with trigger:    ${withT.map((x) => `${Math.round(x)} ms (${us(x)} us/update)`).join(', ')}`);
  console.log(`  without trigger: ${withoutT.map((x) => `${Math.round(x)} ms (${us(x)} us/update)`).join(', ')}`);
  // Server-side only: the same update loop inside one plpgsql DO block, no client round trips.
  const serverRound = async () => {
    const r = await watcher.query(`do $$ declare i int; t0 timestamptz := clock_timestamp(); begin
      for i in 1..${n} loop update "sagaflow"."flow_runs" set updated_at = now(), version = version + 1 where id = ('{${ids.join(',')}}'::uuid[])[1 + i % ${ids.length}]; end loop;
      raise notice '%', extract(epoch from clock_timestamp() - t0) * 1000; end $$`);
    return r;
  };
  const notices: string[] = [];
  watcher.on('notice', (m) => notices.push(m.message ?? ''));
  for (let k = 0; k < 3; k++) {
    await serverRound();
    await watcher.query(dropSql);
    await serverRound();
    await watcher.query(createSql);
  }
  await new Promise((r) => setTimeout(r, 50));
  console.log(
    `  server-side loop of ${n} updates (ms), alternating with/without: ${notices.map((x) => Math.round(Number(x))).join(', ')}`,
  );

  await writer.end();
  await watcher.end();
  await db.close();
  rmSync(before, { recursive: true, force: true });
  await cluster.stop();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
