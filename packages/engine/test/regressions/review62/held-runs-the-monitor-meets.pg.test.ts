import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createTestEngine, type TestEngine } from '../../../src/testing/create-test-engine.ts';
import { capturingLogger } from '../../support/capturing-logger.ts';
import { waitersOn } from '../../support/held-rows.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { actions, holding, waiter } from '../../repairs/support/repair-fixtures.ts';
import { parkedWaiters } from './support/overdue-runs.ts';
import { seedOrphans } from './support/orphans.ts';

/**
 * Review 62, held items (ADR 0135 §1–§2; ADR 0134 §1; seed 000's R4 through ADR 0010). Attacked:
 * - a run held for good in a lock mode other than FOR UPDATE that the sweep's `for no key update` also
 *   conflicts with (FOR SHARE): passed over within the allowance, the free overdue run still expired;
 * - a run held for good FOR KEY SHARE, as a host's open transaction that inserted a row referencing the run
 *   through a foreign key holds it: the sweep's `for no key update` does not conflict, so the run is expired
 *   in that pass, not passed over;
 * - the doctor's R4 on an orphaned step whose run's row a worker's round holds for a moment: it waits and
 *   reclaims the step in the same pass.
 */
async function session(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

describe('review 62: runs the monitor meets held in other lock modes (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  let t: TestEngine;
  const clients: pg.Client[] = [];
  const capture = capturingLogger();
  beforeAll(async () => {
    db = await openTestDatabase({ poolSize: 8 });
    t = await createTestEngine({
      db,
      flows: [waiter, holding],
      actions,
      logger: capture.logger,
      config: { sweeps: { held_run_wait_ms: 300 } },
    });
  });
  afterAll(async () => {
    for (const c of clients) {
      await c.query('rollback').catch(() => undefined);
      await c.end().catch(() => undefined);
    }
    await t?.close();
    await db?.close();
  });

  it('a run held FOR SHARE for good is passed over within the allowance; the free one is expired', async () => {
    const [held, free] = await parkedWaiters(t, [60, 120]);
    t.clock.advance(300_000);
    const c = await session(db.url!);
    clients.push(c);
    await c.query('begin');
    await c.query('select id from sagaflow.flow_runs where id = $1 for share', [held]);
    const started = performance.now();
    const pass = await t.engine.sweepExpiredRuns();
    const tookMs = performance.now() - started;
    const line = capture.lines.find((l) => l.runId === held && String(l.msg).startsWith('expiry: run '));
    expect({ expired: pass.expired, waitedMs: line?.waitedMs, quick: tookMs < 300 + 2_000 }).toEqual({
      expired: [free],
      waitedMs: 300,
      quick: true,
    });
    await c.query('rollback');
    expect((await t.engine.sweepExpiredRuns()).expired).toEqual([held]);
  }, 60_000);

  it("a run a host's open transaction references through a foreign key (FOR KEY SHARE) is expired in the pass", async () => {
    await db.prisma.$executeRawUnsafe(
      'create table public.r62_host_orders (id serial primary key, run_id uuid not null references sagaflow.flow_runs(id))',
    );
    const [run] = await parkedWaiters(t, [60]);
    t.clock.advance(300_000);
    const c = await session(db.url!);
    clients.push(c);
    await c.query('begin');
    await c.query('insert into public.r62_host_orders (run_id) values ($1)', [run]);
    const pass = await t.engine.sweepExpiredRuns();
    const row = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: run! } });
    expect({ expired: pass.expired, expiredAt: row.expired_at !== null }).toEqual({ expired: [run], expiredAt: true });
    await c.query('commit');
  }, 60_000);

  it("the doctor waits for an orphaned step's run a round holds for a moment and reclaims it in that pass", async () => {
    const t2 = await createTestEngine({
      db,
      flows: [holding],
      actions,
      // A long allowance: the test lets the row go once it sees the doctor wait, however loaded the machine.
      config: { sweeps: { held_run_wait_ms: 60_000 } },
    });
    try {
      const [runId] = await seedOrphans(db, { count: 1, repairCount: 0, goneMinutesAgo: 10 });
      const c = await session(db.url!);
      clients.push(c);
      const pid = (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      await c.query('begin');
      // A replay's load takes the run this way (loadRunForReplay).
      await c.query('select id from sagaflow.flow_runs where id = $1 for no key update', [runId]);
      let settled = false;
      const pass = t2.engine.sweepDoctor().finally(() => (settled = true));
      await waitFor('the doctor to wait on the held run or to answer', async () =>
        settled || (await waitersOn(db, pid)).length > 0 ? true : undefined,
      );
      await c.query('rollback');
      const done = await pass;
      const step = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId! } });
      expect({
        r4: done.redispatched.filter((r) => r.runId === runId).length,
        opened: step.reclaim_stale_at !== null,
      }).toEqual({
        r4: 1,
        opened: true,
      });
    } finally {
      await t2.close();
    }
  }, 60_000);
});
