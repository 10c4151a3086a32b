import { describe, expect, it } from 'vitest';
import { waitFor } from '../../support/wait-for.ts';
import { gate } from '../harness.ts';
import { losableListenSuite } from './support/lose-listen.ts';

const release = gate();
/**
 * ADR 0064 with every slot taken: the pool's LISTEN is lost and, while it is held back, another
 * process queues a run whose NOTIFY nobody hears. When the LISTEN takes hold the pool owes a look
 * at the queue (it cannot claim: it is full) and sends it at once; the look finds the job and marks
 * the pool nudged (queued work goes first, ADR 0060), so once the slot frees the queued run is
 * claimed and runs once. The poll is a minute away, so only the owed look can find it.
 */
describe('a full pool whose LISTEN is lost and retaken (postgres)', () => {
  const { flow, ran, suite } = losableListenSuite({
    tag: 'full',
    concurrency: 1,
    hold: (n) => (n === 0 ? release.promise : undefined),
    release: release.open,
  });

  it('looks at the queue at once, and claims the queued run when the slot frees, each run once', async () => {
    const { db, pool, other, listener } = suite;
    pool.startWorkers();
    const counters = () => pool.workerCounters()!;
    await waitFor("the pool's first claim", async () => (counters().emptyClaims > 0 ? true : undefined));
    const { runId: holding } = await pool.startFlow(flow, 0);
    await waitFor('the only slot to be taken', async () => (ran.has(0) ? true : undefined));

    await listener.lose();
    const { runId: queued } = await other.startFlow(flow, 1);
    const found = counters().looksFindingWork;
    listener.retake();
    await waitFor('the owed look to find the queued job', async () =>
      counters().looksFindingWork > found ? true : undefined,
    );

    // The look marked the pool nudged: the freed slot goes to the queued run, and a start after it is handed over.
    release.open();
    await waitFor('the holding run to complete', async () =>
      (await pool.getRun(holding))?.run.status === 'Completed' ? true : undefined,
    );
    await waitFor('the queued run to complete', async () =>
      (await pool.getRun(queued))?.run.status === 'Completed' ? true : undefined,
    );
    const { runId: later } = await pool.startFlow(flow, 2);
    await waitFor('the later run to complete', async () =>
      (await pool.getRun(later))?.run.status === 'Completed' ? true : undefined,
    );
    expect([...ran.entries()].sort()).toEqual([
      [0, 1],
      [1, 1],
      [2, 1],
    ]);
    expect(await db.prisma.job.count()).toBe(0);
  });
});
