import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { retryRolledBack } from '../../src/db/retry-rolled-back.ts';
import { openTestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait-for.ts';

/**
 * ADR 0074: an operator's transaction (terminate, cancel, signal, kick, reclaim, repair) that
 * PostgreSQL ends to break a lock cycle — which a statement round holding its earlier statements'
 * run locks can close (ADR 0066) — runs again instead of failing its caller. A real deadlock through
 * Prisma's interactive transaction, so the error is recognised in the shape the engine's writers get it.
 */
describe('a transaction rolled back by a deadlock runs again (PostgreSQL)', () => {
  let db: (Database & { url?: string }) | undefined;
  let side: pg.Client | undefined;
  let sidePid = 0;
  beforeAll(async () => {
    db = await openTestDatabase();
    await db.driver.exec(
      'create table public.deadlock_pair (id int primary key, v int not null); insert into public.deadlock_pair values (1, 0), (2, 0)',
    );
    side = new pg.Client({ connectionString: db.url! });
    await side.connect();
    sidePid = (await side.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    // The side checks for a deadlock only after 30 s, and it is the first of the two to wait: the attempt
    // under test, which closes the cycle, checks 1 s (the server's default) into its own wait and is the
    // one ended, however loaded the machine (each backend checks once per wait, deadlock_timeout in).
    await side.query("set deadlock_timeout = '30s'");
  });
  afterAll(async () => {
    await side?.end();
    await db?.close();
  });

  const waitingForLock = async (pid: number) =>
    (
      await db!.prisma.$queryRaw<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity where pid = ${pid} and wait_event_type = 'Lock'`
    )[0]!.n === 1;

  it('the victim of a lock cycle is run again once the other side is through, and writes once', async () => {
    const prisma = db!.prisma;
    await side!.query('begin');
    await side!.query('update public.deadlock_pair set v = v + 10 where id = 2');
    let sideDone: Promise<unknown> | undefined;
    const attempts: number[] = [];

    const result = await retryRolledBack((attempt) =>
      prisma.$transaction(
        async (tx) => {
          attempts.push(attempt);
          // The run again starts once the side is through. Its first write must not come sooner: the
          // aborted attempt left row 1 free, and taken by this one before the side's woken update got to
          // it, the side would wait on this transaction while this one waited on the side (in here, where
          // PostgreSQL cannot see it) until Prisma's timeout. Seen in a full run on a loaded machine.
          if (attempt > 1) await sideDone;
          await tx.$executeRaw`update public.deadlock_pair set v = v + 1 where id = 1`;
          if (attempt === 1) {
            // Row 1 is this attempt's: the side asks for it and waits (its own check 30 s away); then this
            // attempt asks for row 2, the side's, which closes the cycle, and its check, 1 s into that wait,
            // ends it. Had the side asked second, after this attempt's one check had found no cycle yet
            // (a poll slower than 1 s on a loaded machine), the side would have been the one ended.
            sideDone = side!
              .query('update public.deadlock_pair set v = v + 10 where id = 1')
              .then(() => side!.query('commit'));
            await waitFor('the side waiting for row 1', async () =>
              (await waitingForLock(sidePid)) ? true : undefined,
            );
            await tx.$executeRaw`update public.deadlock_pair set v = v + 1 where id = 2`;
          } else {
            await tx.$executeRaw`update public.deadlock_pair set v = v + 1 where id = 2`;
          }
          return 'written';
        },
        { timeout: 30_000, maxWait: 30_000 },
      ),
    );

    expect(result).toBe('written');
    expect(attempts).toEqual([1, 2]);
    // Each side's writes once: 10 + 1 on both rows.
    const rows = await prisma.$queryRaw<
      { id: number; v: number }[]
    >`select id, v from public.deadlock_pair order by id`;
    expect(rows).toEqual([
      { id: 1, v: 11 },
      { id: 2, v: 11 },
    ]);
  });

  it('an error that is not a rolled-back conflict reaches the caller at once', async () => {
    const attempts: number[] = [];
    await expect(
      retryRolledBack((attempt) =>
        db!.prisma.$transaction(async (tx) => {
          attempts.push(attempt);
          await tx.$executeRaw`insert into public.deadlock_pair values (1, 0)`;
        }),
      ),
    ).rejects.toThrow(/duplicate key|Unique constraint/i);
    expect(attempts).toEqual([1]);
  });
});
