import { describe, expect, it } from 'vitest';
import { waitFor } from '../../support/wait-for.ts';
import { losableListenSuite } from './support/lose-listen.ts';

/**
 * ADR 0064 reviewed (ADR 0069): a LISTEN taking hold no longer nudges the pool; it marks a claim
 * (or a look) owed. Attacked on the real server: the pool's LISTEN connection is terminated again and
 * again, and while its next LISTEN is held back, another process starts a run, so its job's NOTIFY
 * goes to no one. The poll is a minute away: only the owed claim can find that job. Each such run
 * must run once, starts handed to the pool meanwhile must not be refused as 'queued', and a pool
 * stopped the moment its LISTEN takes hold (a claim owed) must leave its job in the queue, not lost.
 */
describe('a pool whose LISTEN is lost and retaken repeatedly (postgres)', () => {
  const { flow, ran, suite } = losableListenSuite({ tag: 'listen', concurrency: 2 });

  const completed = (runId: string) =>
    waitFor(`run ${runId} completes`, async () =>
      (await suite.pool.getRun(runId))?.run.status === 'Completed' ? true : undefined,
    );

  it('finds each job queued while nobody listened, once, and refuses no start for it', async () => {
    const { db, pool, other, listener } = suite;
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
    const { db, pool, other, listener } = suite;
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
