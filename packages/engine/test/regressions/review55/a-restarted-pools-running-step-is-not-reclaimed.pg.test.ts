import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.ts';
import { createEngine, defineAction, defineFlow, type Engine } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';

/**
 * Review 55 (ADR 0010 addendum, session 42). `stopWorkers()` writes the worker's row `stopped_at`,
 * and a stopped worker "is gone at once, whatever its last heartbeat". `startWorkers()` again starts
 * a pool under the same worker id (deps.workerId is per engine), and only its next beat clears
 * `stopped_at`. The first addendum made such a pool claim nothing until that beat committed; the one
 * that replaced it withdrew the gate and said nothing about the restart. Here the restarted pool's
 * first beat is held up (the test holds a SHARE lock on `workers`, as review 53 did: a lock, a starved
 * pool or a slow round trip look the same to the beat). The start is handed to the pool, its step runs
 * (it waits on a gate the test holds), and meanwhile another replica's `reclaimStep` is asked to
 * reclaim it. The worker is alive and running the step; reclaim is off. The guarantee (seed 000: with
 * reclaim off the engine never re-executes a step on its own initiative; ADR 0010: a reclaim is refused
 * while the owner is alive) is that the reclaim is refused and the step runs once.
 */
const config = {
  worker: { poll_interval_ms: 25, heartbeat_interval_ms: 100, dead_after_seconds: 2 },
  logging: { anomaly_level: null },
} as const;

describe('review 55: a pool started again after stopWorkers (real PostgreSQL)', () => {
  let db: Database & { url?: string };
  const engines: Engine[] = [];
  let unlock: () => Promise<void> = async () => undefined;
  let open: () => void = () => undefined;
  afterAll(async () => {
    open();
    await unlock();
    for (const e of engines) await e.stopWorkers(5_000).catch(() => undefined);
    await db?.close();
  });

  it('a step a restarted pool is running is not reclaimed before its first beat lands, and runs once', async () => {
    db = await openTestDatabase({ poolSize: 6 });
    let entries = 0;
    const gate = new Promise<void>((res) => (open = res));
    const charge = defineAction({
      name: 'r55-restart-charge',
      run: async () => {
        entries += 1;
        await gate;
        return 'charged';
      },
    });
    const flow = defineFlow({
      name: 'r55-restart',
      version: 1,
      run: async (ctx) => ctx.action(charge, null),
    });
    const make = () => {
      const e = createEngine({ db, flows: [flow], actions: [charge], config, logger: pino({ level: 'silent' }) });
      engines.push(e);
      return e;
    };
    const a = make();
    const b = make();
    const workerId = a.runtime.workerId;

    // A's pool runs, beats, and stops: its row now says stopped_at.
    a.startWorkers();
    await waitFor(
      'A to beat',
      async () => (await db.prisma.worker.findUnique({ where: { id: workerId } })) ?? undefined,
    );
    await a.stopWorkers(5_000);
    expect((await db.prisma.worker.findUniqueOrThrow({ where: { id: workerId } })).stopped_at).not.toBeNull();

    // The restarted pool's first beat is held up behind a lock on the workers table.
    const locker = await db.pool!.connect();
    let locked = true;
    unlock = async () => {
      if (!locked) return;
      locked = false;
      await locker.query('rollback');
      locker.release();
    };
    await locker.query('begin');
    await locker.query('lock table "sagaflow"."workers" in share mode');
    a.startWorkers();
    await waitFor("A's restarted beat to wait on the workers table", async () => {
      const r = await db.pool!.query<{ n: string }>(
        `select count(*) as n from pg_locks l join pg_class c on c.oid = l.relation
          where c.relname = 'workers' and not l.granted`,
      );
      return Number(r.rows[0]?.n) > 0 ? true : undefined;
    });

    // A start while A's (live) pool is up: the pool takes it and runs its step. Started again after a
    // stop, the pool is a new worker (ADR 0010 second addendum): its id is not the stopped one's, and
    // with no row yet its step is judged by its claim's age, not by the last pool's stop.
    const { runId } = await a.startFlow(flow, null);
    const seen = await waitFor('A to run the charge step', async () => {
      const s = await db.prisma.actionRun.findFirst({ where: { run_id: runId, name: 'r55-restart-charge' } });
      return s?.status === 'Running' && s.claimed_by === a.runtime.workerId && entries === 1 ? { step: s } : undefined;
    });
    expect(seen.step.claimed_by, 'the restarted pool runs under an id of its own').not.toBe(workerId);

    // Another replica is asked to reclaim it (the step A runs, or whatever step the run has) meanwhile.
    const reclaim = await b.reclaimStep(runId, { stepId: seen.step.id });
    let second = 'not reclaimed';
    if (reclaim.reclaimed) {
      // What the reclaim opens the door to: B's pool runs the step again while A still runs it.
      b.startWorkers();
      second = await waitFor('B to run the step a second time', async () =>
        entries >= 2 ? 'B ran it a second time while A still ran it' : undefined,
      ).catch(() => 'B did not run it again');
    }
    const events = await db.prisma.flowEvent.findMany({ where: { run_id: runId, type: 'step.reclaimed' } });
    expect(
      { reclaim, second, entries, reclaimedEvents: events.map((e) => e.data) },
      `A's pool is alive and runs step ${seen.step.id}; its first beat after startWorkers has not landed, and the row of its last pool says stopped_at`,
    ).toMatchObject({ reclaim: { reclaimed: false }, second: 'not reclaimed' });
    expect(entries, 'the step ran at most once so far').toBeLessThanOrEqual(1);

    await unlock();
    open();
    await waitFor('the run to complete', async () => {
      const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      return r.status === 'Completed' ? r : undefined;
    });
    expect(entries, 'the step ran once, under A once its beat landed').toBe(1);
  }, 60_000);
});
