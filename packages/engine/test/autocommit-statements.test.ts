import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { autocommitDb } from '../src/db/autocommit-db.ts';
import { createDatabase } from '../src/db/create-database.ts';
import type { Database } from '../src/db/database.ts';
import { rawDb, type RawDb } from '../src/db/raw-db.ts';
import { beatWorker } from '../src/store/beat-worker.ts';
import { claimJobs, type DbJob } from '../src/store/claim-jobs.ts';
import { deleteJob } from '../src/store/delete-job.ts';
import { enqueueJob } from '../src/store/enqueue-job.ts';
import { insertStartedRun, type StartedRun } from '../src/store/insert-started-run.ts';
import { releaseJobs } from '../src/store/release-jobs.ts';
import { stopWorker } from '../src/store/stop-worker.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';

/** Thrown to roll the holding transaction back. */
class RolledBack extends Error {}

const zone = 'America/New_York';
const now = new Date('2026-12-01T12:00:00.123Z');
const later = (ms: number) => new Date(now.getTime() + ms);
const doubles = [0.48500823341430377, 0.14186903463910627];

const typeOf = (v: unknown) => (v === null ? 'null' : typeof v === 'object' ? v.constructor.name : typeof v);
/** `masked` columns (filled by a sequence, gen_random_uuid() or the database clock) are compared by type only. */
function comparable(value: unknown, masked: ReadonlySet<string>, key = ''): unknown {
  if (masked.has(key)) return `<${typeOf(value)}>`;
  if (Array.isArray(value)) return value.map((v) => comparable(v, masked));
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, comparable(v, masked, k)]));
  return value;
}

/**
 * A database whose sessions run in a zone other than UTC: on PostgreSQL for every new connection of
 * the pool (the database's setting), on PGlite for its one session.
 */
async function openNonUtcDatabase(): Promise<Database> {
  const first = await openTestDatabase();
  if (testDbKind() === 'pglite') {
    await first.driver.exec(`set timezone to '${zone}'`);
    return first;
  }
  await first.driver.exec(
    `do $$ begin execute format('alter database %I set timezone to %L', current_database(), '${zone}'); end $$`,
  );
  await first.close();
  return createDatabase({ kind: 'postgres', url: first.url! });
}

/** One store function run on a freshly seeded state, then the rows it left read back. */
interface Case {
  masked: string[];
  seed?: (db: Database) => Promise<bigint[]>;
  work: (db: RawDb, seeded: bigint[]) => Promise<unknown>;
  after: (db: Database, result: unknown) => Promise<unknown>;
}

describe(`a statement sent on its own through the driver returns and stores what Prisma's raw path does (${testDbKind()}, TimeZone ${zone})`, () => {
  let db: Database;
  let runId: string;

  const start = (lease: StartedRun['lease']): StartedRun => ({
    flowName: 'f',
    flowVersion: 3,
    input: { d: doubles },
    businessKey: null,
    tags: ['a', 'b'],
    expiresAt: later(3_600_000),
    runTimeoutAt: later(7_200_000),
    now,
    lease,
  });
  const jobs = (db: Database) =>
    db.prisma.$queryRaw`select kind, run_id, row_id, available_at, locked_by, locked_until, deliveries, payload
                          from "sagaflow"."jobs" where run_id = ${runId}::uuid order by available_at, locked_by`;
  /** The only jobs: two due now and one due later, leased as `lockedBy` says; their ids, oldest first. */
  const seedJobs = async (db: Database, lockedBy: (string | null)[] = [null, null, null]) => {
    await db.prisma.$executeRaw`delete from "sagaflow"."jobs"`;
    const due = [later(-2_000), later(-1_000), later(60_000)];
    for (const availableAt of due) await enqueueJob(db.prisma, { kind: 'wake-run', runId, availableAt });
    const rows = await db.prisma.$queryRaw<{ id: bigint }[]>`
      select id from "sagaflow"."jobs" where run_id = ${runId}::uuid order by available_at`;
    for (const [i, row] of rows.entries())
      await db.prisma.$executeRaw`update "sagaflow"."jobs"
        set locked_by = ${lockedBy[i] ?? null}, locked_until = ${lockedBy[i] ? later(30_000) : null}::timestamptz
        where id = ${row.id}::bigint`;
    return rows.map((r) => r.id);
  };
  const startedRows = async (db: Database, result: unknown) => {
    const id = (result as { runId: string }).runId;
    return [
      await db.prisma.$queryRaw`select * from "sagaflow"."flow_runs" where id = ${id}::uuid`,
      await db.prisma
        .$queryRaw`select type, sequence, data from "sagaflow"."flow_events" where run_id = ${id}::uuid order by id`,
      await db.prisma.$queryRaw`select kind, available_at, locked_by, locked_until, deliveries
                                  from "sagaflow"."jobs" where run_id = ${id}::uuid order by available_at`,
    ];
  };
  const worker = (db: Database) =>
    db.prisma.$queryRaw`select id, started_at, heartbeat_at, stopped_at from "sagaflow"."workers" where id = 'w-beat'`;

  const cases: [string, Case][] = [
    [
      'insertStartedRun, leased to its worker (written active)',
      {
        masked: ['id', 'runId', 'run_id', 'job_id'],
        work: (db) => insertStartedRun(db, start({ workerId: 'w1', leaseSeconds: 30 })),
        after: startedRows,
      },
    ],
    [
      'insertStartedRun, for any worker (Pending)',
      { masked: ['id', 'runId'], work: (db) => insertStartedRun(db, start(null)), after: startedRows },
    ],
    [
      'claimJobs',
      {
        masked: ['id'],
        seed: (db) => seedJobs(db),
        work: (db) => claimJobs(db, { workerId: 'w1', limit: 5, leaseSeconds: 30, now }),
        after: jobs,
      },
    ],
    [
      'deleteJob (its holder, then another worker)',
      {
        masked: [],
        seed: (db) => seedJobs(db, ['w1', 'w2', null]),
        work: async (db, [mine, theirs]) => [
          await deleteJob(db, { id: mine!, workerId: 'w1' }),
          await deleteJob(db, { id: theirs!, workerId: 'w1' }),
        ],
        after: jobs,
      },
    ],
    [
      'releaseJobs (some of them its own, then none)',
      {
        masked: [],
        seed: (db) => seedJobs(db, ['w1', 'w2', 'w1']),
        work: async (db, ids) => [
          await releaseJobs(db, { ids, workerId: 'w1' }),
          await releaseJobs(db, { ids, workerId: 'w1' }),
        ],
        after: jobs,
      },
    ],
    [
      'beatWorker, stopWorker, beatWorker',
      {
        masked: ['started_at', 'heartbeat_at', 'stopped_at'],
        seed: async (db) => (await db.prisma.$executeRaw`delete from "sagaflow"."workers" where id = 'w-beat'`, []),
        work: async (db) => {
          await beatWorker(db, { workerId: 'w-beat' });
          await stopWorker(db, { workerId: 'w-beat' });
          const stopped = await db.$queryRaw<unknown[]>`
            select stopped_at is not null as stopped from "sagaflow"."workers" where id = 'w-beat'`;
          await beatWorker(db, { workerId: 'w-beat' });
          return stopped;
        },
        after: worker,
      },
    ],
  ];

  beforeAll(async () => {
    db = await openNonUtcDatabase();
    ({ runId } = await insertStartedRun(db.prisma, start(null)));
  });
  afterAll(async () => {
    await db?.close();
  });

  it('both paths run in the non-UTC zone', async () => {
    const shown = (d: RawDb) => d.$queryRaw<{ TimeZone: string }[]>`show timezone`;
    expect(await shown(db.prisma)).toEqual([{ TimeZone: zone }]);
    expect(await shown(autocommitDb(db))).toEqual([{ TimeZone: zone }]);
  });

  it.each(cases)('%s', async (_name, c) => {
    const masked = new Set(c.masked);
    const outcome = async (target: RawDb) => {
      const seeded = (await c.seed?.(db)) ?? [];
      const result = await c.work(target, seeded);
      return comparable([result, await c.after(db, result)], masked);
    };
    const prisma = await outcome(db.prisma);
    const driver = await outcome(autocommitDb(db));
    expect(driver).toStrictEqual(prisma);
  });

  it('a statement sent while a transaction holds the database waits for it and never runs inside it', async () => {
    await db.prisma.$executeRaw`delete from "sagaflow"."jobs" where run_id = ${runId}::uuid`;
    let claim: Promise<DbJob[]> | undefined;
    let claimed = false;
    await db.driver
      .transaction(async (session) => {
        await enqueueJob(
          rawDb((s) => session.raw(s)),
          { kind: 'wake-run', runId, availableAt: later(-1_000) },
        );
        claim = claimJobs(autocommitDb(db), { workerId: 'w1', limit: 5, leaseSeconds: 30, now });
        void claim.then(() => (claimed = true));
        // Statements of this transaction sent after the claim: on PGlite's one session a claim let in
        // would run before them and, inside the transaction, take the job this transaction wrote.
        for (let i = 0; i < 3; i++) await session.query('select 1');
        // PGlite queues the claim behind this transaction; PostgreSQL runs it on another connection.
        if (testDbKind() === 'pglite') expect(claimed).toBe(false);
        throw new RolledBack();
      })
      .catch((err: unknown) => {
        if (!(err instanceof RolledBack)) throw err;
      });
    // It waited (it did not fail) and ran after the rollback: the job it would have taken inside is gone.
    expect(await claim).toEqual([]);
    expect(await jobs(db)).toEqual([]);
  });
});
