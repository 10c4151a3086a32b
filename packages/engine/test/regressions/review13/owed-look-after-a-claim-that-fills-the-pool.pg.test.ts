import { describe, expect, it } from 'vitest';
import { waitFor } from '../../support/wait-for.ts';
import { gate } from '../harness.ts';
import { losableListenSuite } from './support/lose-listen.ts';

const stepGate = gate();
/**
 * ADR 0064 says a claim that returns with `owed` set is followed by another claim or look. Attacked:
 * the LISTEN takes hold while a claim is out, and that claim fills the pool. The wake the LISTEN gave
 * came while no nap was armed, and the loop, full, napped a whole poll interval: the look owed was
 * not sent, so a job queued while nobody listened was not known to the pool (starts could take the
 * next freed slot ahead of it) until the poll. Fixed in worker/worker-pool.ts: a claim that returns
 * with a look owed and the pool full goes round once more and looks. The poll is a minute away, so
 * only the owed look can find the second queued job here.
 */
describe('a look owed while a claim is out that fills the pool (postgres)', () => {
  let holdClaims = false;
  const heldClaims: (() => void)[] = [];
  const { flow, ran, suite } = losableListenSuite({
    tag: 'owed',
    concurrency: 1,
    // Run 1 holds the pool's only slot until the test lets it go.
    hold: (n) => (n === 1 ? stepGate.promise : undefined),
    // The pool's job claims wait, while `holdClaims`, until the test lets each go.
    wrap: (db, listening) => {
      const statement = db.driver.statement.bind(db.driver);
      return {
        ...listening,
        driver: {
          ...db.driver,
          statement: async (s, limits) => {
            if (holdClaims && s.text.includes('update "sagaflow"."jobs" j') && s.text.includes('skip locked')) {
              const claim = gate();
              heldClaims.push(claim.open);
              await claim.promise;
            }
            return statement(s, limits);
          },
        },
      };
    },
    release: () => {
      holdClaims = false;
      for (const open of heldClaims) open();
      stepGate.open();
    },
  });

  it('looks at the queue as soon as that claim returns', async () => {
    const { pool, other, listener } = suite;
    pool.startWorkers();
    const counters = () => pool.workerCounters()!;
    await waitFor("the pool's first claim", async () => (counters().emptyClaims > 0 ? true : undefined));

    // The LISTEN is lost and held back: two runs queued now announce themselves to no one.
    await listener.lose();
    const { runId: first } = await other.startFlow(flow, 1);
    const { runId: second } = await other.startFlow(flow, 2);

    // A run handed to the pool ends and frees the slot: the loop claims, and that claim is held.
    holdClaims = true;
    const { runId: handed } = await pool.startFlow(flow, 0);
    await waitFor('the claim after the handed run to be out', async () => (heldClaims.length > 0 ? true : undefined));
    expect((await pool.getRun(handed))?.run.status).toBe('Completed');

    // The LISTEN takes hold while that claim is out: a look is owed.
    const heard = counters().notifications.others;
    listener.retake();
    await waitFor('the LISTEN to take hold', async () => (counters().notifications.others > heard ? true : undefined));

    // The claim returns with run 1's job and fills the pool; the look owed must go now, not at the poll.
    const found = counters().looksFindingWork;
    holdClaims = false;
    for (const open of heldClaims.splice(0)) open();
    await waitFor('run 1 to take the slot', async () => (ran.has(1) ? true : undefined));
    await waitFor('the owed look to find run 2 queued', async () =>
      counters().looksFindingWork > found ? true : undefined,
    );

    stepGate.open();
    for (const runId of [first, second])
      await waitFor(`run ${runId} to complete`, async () =>
        (await pool.getRun(runId))?.run.status === 'Completed' ? true : undefined,
      );
    expect([...ran.entries()].sort()).toEqual([
      [0, 1],
      [1, 1],
      [2, 1],
    ]);
  });
});
