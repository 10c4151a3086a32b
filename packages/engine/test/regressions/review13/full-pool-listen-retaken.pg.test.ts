import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, defineAction, defineFlow, type Database, type Engine } from '../../../src/index.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { gate } from '../harness.ts';
import { losableListen } from './support/lose-listen.ts';

const release = gate();
const entered = new Set<number>();
const ran = new Map<number, number>();
const step = defineAction({
  name: 'review13-full-step',
  run: async (n: number) => {
    entered.add(n);
    ran.set(n, (ran.get(n) ?? 0) + 1);
    if (n === 0) await release.promise;
    return n;
  },
});
const flow = defineFlow({ name: 'review13-full', version: 1, run: async (ctx, n: number) => ctx.action(step, n) });

/**
 * ADR 0064 with every slot taken: the pool's LISTEN is lost and, while it is held back, another
 * process queues a run whose NOTIFY nobody hears. When the LISTEN takes hold the pool owes a look
 * at the queue (it cannot claim: it is full) and sends it at once; the look finds the job and marks
 * the pool nudged (queued work goes first, ADR 0060), so once the slot frees the queued run is
 * claimed and runs once. The poll is a minute away, so only the owed look can find it.
 */
describe('a full pool whose LISTEN is lost and retaken (postgres)', () => {
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
        config: { worker: { concurrency: 1, poll_interval_ms: 60_000 } },
      });
    pool = make(listener.database);
    other = make(db);
  });
  afterAll(async () => {
    listener.retake();
    release.open();
    await pool.stopWorkers();
    await db.close();
  });

  it('looks at the queue at once, and claims the queued run when the slot frees, each run once', async () => {
    pool.startWorkers();
    const counters = () => pool.workerCounters()!;
    await waitFor("the pool's first claim", async () => (counters().emptyClaims > 0 ? true : undefined));
    const { runId: holding } = await pool.startFlow(flow, 0);
    await waitFor('the only slot to be taken', async () => (entered.has(0) ? true : undefined));

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
