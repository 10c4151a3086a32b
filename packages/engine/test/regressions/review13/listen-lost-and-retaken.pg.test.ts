import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, defineAction, defineFlow, type Database, type Engine } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { losableListen } from './support/lose-listen.ts';

const ran = new Map<number, number>();
const step = defineAction({
  name: 'review13-listen-step',
  run: async (n: number) => {
    ran.set(n, (ran.get(n) ?? 0) + 1);
    return n;
  },
});
const flow = defineFlow({ name: 'review13-listen', version: 1, run: async (ctx, n: number) => ctx.action(step, n) });

/**
 * ADR 0064 reviewed (ADR 0069): a LISTEN taking hold no longer nudges the pool; it marks a claim
 * (or a look) owed. Attacked on the real server: the pool's LISTEN connection is terminated again and
 * again, and while its next LISTEN is held back, another process starts a run, so its job's NOTIFY
 * goes to no one. The poll is a minute away: only the owed claim can find that job. Each such run
 * must run once, starts handed to the pool meanwhile must not be refused as 'queued', and a pool
 * stopped the moment its LISTEN takes hold (a claim owed) must leave its job in the queue, not lost.
 */
describe('a pool whose LISTEN is lost and retaken repeatedly (postgres)', () => {
  let db: Database;
  let pool: Engine;
  let other: Engine;
  let listener: ReturnType<typeof losableListen>;
  beforeAll(async () => {
    db = await openTestDatabase();
    listener = losableListen(db);
    const make = (d: Database) =>
      createEngine({
        db: d,
        flows: [flow],
        actions: [step],
        logger: pino({ level: 'silent' }),
        config: { worker: { concurrency: 2, poll_interval_ms: 60_000 } },
      });
    pool = make(listener.database);
    // Another process's engine with no pool: its starts go through the job table and its NOTIFY.
    other = make(db);
  });
  afterAll(async () => {
    listener.retake();
    await pool.stopWorkers();
    await db.close();
  });

  const completed = (runId: string) =>
    waitFor(`run ${runId} completes`, async () =>
      (await pool.getRun(runId))?.run.status === 'Completed' ? true : undefined,
    );

  it('finds each job queued while nobody listened, once, and refuses no start for it', async () => {
    pool.startWorkers();
    const counters = () => pool.workerCounters()!;
    await waitFor("the pool's first claim", async () => (counters().emptyClaims > 0 ? true : undefined));

    for (let i = 1; i <= 5; i++) {
      await listener.lose();
      // Nobody listens: this job's NOTIFY is lost.
      const { runId } = await other.startFlow(flow, i);
      expect(await db.prisma.job.count({ where: { run_id: runId } })).toBe(1);
      listener.retake();
      // A start handed to the pool while the owed claim is out or just answered.
      const handed = await pool.startFlow(flow, 100 + i);
      await completed(runId);
      await completed(handed.runId);
    }
    expect(counters().handOffsRefused.queued).toBe(0);
    expect([...ran.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    expect(ran.size).toBe(10);
    expect(await db.prisma.job.count()).toBe(0);
  });

  it('stopped the moment its LISTEN takes hold, leaves the owed job in the queue for the next pool', async () => {
    await listener.lose();
    const { runId } = await other.startFlow(flow, 50);
    listener.retake();
    const stopped = await pool.stopWorkers();
    expect(stopped.drained).toBe(true);
    // Either the owed claim took and ran it before the stop, or it waits, unleased, in the queue.
    const run = await pool.getRun(runId);
    if (run?.run.status !== 'Completed') {
      const jobs = await db.prisma.job.findMany({ where: { run_id: runId } });
      expect(jobs.map((j) => j.locked_by)).toEqual([null]);
      other.startWorkers();
      try {
        await waitFor('the next pool to run it', async () =>
          (await other.getRun(runId))?.run.status === 'Completed' ? true : undefined,
        );
      } finally {
        await other.stopWorkers();
      }
    }
    expect(ran.get(50)).toBe(1);
  });
});
