import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { actions, holding } from '../../repairs/support/repair-fixtures.ts';
import { seedOrphans } from './support/orphans.ts';

/**
 * Review 62 (ARCHITECTURE "singleton sweeps use leases on the database clock"; start-monitor.ts: "A replica
 * that does not hold the lease sweeps nothing, so two replicas … never sweep the same page"; ADR 0135:
 * the monitor now waits for held rows, "the allowance plus 100 ms per held run").
 *
 * Attacked: two replicas' monitor loops (`startMonitor`, interval 1 s, so a 10 s lease) with the doctor on,
 * while one other session holds the step rows of 16 orphaned steps (the runs' own rows free), as in
 * `a-doctor-pass-over-held-orphaned-steps-stays-within-its-allowance.pg.test.ts`. The lease is renewed
 * before the doctor and between R1–R3's batches, not during R4, which waits 1 s per held step. Does the
 * replica holding the lease stop (or keep its lease) before another can take it, or do both replicas'
 * doctors sweep the same orphaned steps at once? Seen from the database: two backends waiting on the
 * holding session at once are two R4 passes in flight (each replica's R4 goes one run at a time).
 */
const HELD = 16;

describe("review 62: two replicas' monitors while R4 waits on held orphaned steps (real PostgreSQL)", () => {
  let db: Database & { url?: string };
  const replicas: Database[] = [];
  const engines: TestEngine[] = [];
  let holder: pg.Client | undefined;
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 6 });
    // Two replicas, each with its own pool, named in pg_stat_activity.
    for (const name of ['r62-replica-a', 'r62-replica-b']) {
      const url = new URL(db.url!);
      url.searchParams.set('application_name', name);
      replicas.push(await createDatabase({ kind: 'postgres', url: url.toString(), poolSize: 6 }));
    }
    for (const handle of replicas)
      engines.push(
        await createTestEngine({ db: handle, flows: [holding], actions, config: { repair: { enabled: true } } }),
      );
  });
  afterAll(async () => {
    // Let go first: a monitor's stop waits for its pass, which waits on the held rows.
    await holder?.query('rollback').catch(() => undefined);
    await holder?.end().catch(() => undefined);
    for (const t of engines) await t.engine.stopMonitor().catch(() => undefined);
    for (const t of engines) await t.close().catch(() => undefined);
    for (const r of replicas) await r.close().catch(() => undefined);
    await db?.close();
  });

  it('at no moment do both replicas sweep the held orphaned steps', async () => {
    const runs = await seedOrphans(db, { count: HELD, repairCount: 0, goneMinutesAgo: 60 });
    holder = new pg.Client({ connectionString: db.url! });
    await holder.connect();
    const pid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    await holder.query('begin');
    await holder.query('select id from sagaflow.action_runs where run_id = any($1::uuid[]) for update', [runs]);

    for (const t of engines) t.engine.startMonitor({ intervalMs: 1_000 });
    // Observe by the database's own record of who waits on the holder; stop at the first moment two do.
    // On the base commit (R4 waited 1 s per held step, past the 10 s lease) two did after 11–13 s: 20 s
    // covers that with room, and twice the time a pass within ADR 0135's bound takes (about 2.5 s) many times.
    const until = Date.now() + 20_000;
    const started = Date.now();
    let seen: { afterMs: number; waiting: string[]; lease: unknown } | null = null;
    while (Date.now() < until && seen === null) {
      const waiting = await db.prisma.$queryRaw<{ app: string }[]>`
        select application_name as app from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock' and ${pid}::int = any(pg_blocking_pids(pid))`;
      if (new Set(waiting.map((w) => w.app)).size > 1)
        seen = {
          afterMs: Date.now() - started,
          waiting: waiting.map((w) => w.app).sort(),
          lease: await db.prisma
            .$queryRaw`select holder, renewed_at, expires_at, now() as db_now from sagaflow.leases where name = 'monitor'`,
        };
      else await new Promise((r) => setTimeout(r, 50));
    }
    const ids = engines.map((t) => t.engine.runtime.workerId);
    // Both replicas' doctors waiting on the held rows at one moment: two sweeps of the same page.
    expect(seen, JSON.stringify({ seen, replicaWorkerIds: ids })).toBeNull();
  }, 90_000);
});
