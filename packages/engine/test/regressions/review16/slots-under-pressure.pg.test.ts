import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInBatch } from '../../../src/api/start-in-batch.ts';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { finishInBatch, slowStatementMs, transitionInBatch } from '../../../src/runtime/run-statement-batches.ts';
import { holdRuns, waitForWaiters } from '../../support/held-rows.ts';
import { historyOf, readyToFinish, startOf, stepClaim, turnEnd } from '../../support/round-items.ts';
import { watchSends } from '../../support/sends-in-flight.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { gate } from '../harness.ts';
import { engineOn, fillSlots, flowName, letGoForRound, runsNamed, tracked, worker } from './support/two-rounds.ts';

/**
 * Review 16 (ADR 0077): the round slots of ADR 0076 (two out while none is slow, one more per slow
 * one, four at most) when a round's backend is ended while the other round is out, and when the pool
 * has fewer connections than the rounds out. Nothing may hang; every item gets its answer (or, where
 * a lone item of its kind would, a retry); nothing is written twice.
 */
describe('round slots under pressure (PostgreSQL)', () => {
  let db: (Database & { url?: string }) | undefined;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db?.close();
  });
  const direct = () => db!;

  it("one round's backend ended while the other round is out: its items get the session's error, the other commits", async () => {
    const watched = watchSends(direct());
    const deps = engineOn(watched.db);
    const { holders, claims } = await fillSlots(direct(), watched, deps, 'ended');
    const [xa, yaRun, xb, ybRun] = await runsNamed(direct(), 'ended', ['xa', 'ya', 'xb', 'yb']);
    const ya = await readyToFinish(direct(), yaRun, worker, { a: 1 });
    const yb = await readyToFinish(direct(), ybRun, worker, { b: 1 });
    const holdA = await holdRuns(direct().url!, [yaRun]);
    const holdB = await holdRuns(direct().url!, [ybRun]);
    const a = {
      claim: tracked(transitionInBatch(deps, stepClaim(worker, xa, 1))),
      finish: tracked(finishInBatch(deps, ya)),
    };
    const roundA = await letGoForRound(watched, holders[0]!);
    const [waiterA] = await waitForWaiters(direct(), holdA.pid);
    const b = {
      claim: tracked(transitionInBatch(deps, stepClaim(worker, xb, 1))),
      finish: tracked(finishInBatch(deps, yb)),
    };
    const roundB = await letGoForRound(watched, holders[1]!);
    await waitForWaiters(direct(), holdB.pid);
    expect(watched.sends.find((s) => s.n === roundB)!.beside).toContain(roundA);

    await direct().prisma.$queryRaw`select pg_terminate_backend(${waiterA!.pid}::int)`;
    const [aClaim, aFinish] = await Promise.all([a.claim.promise, a.finish.promise]);
    expect(aClaim).toMatchObject({ status: 'rejected', reason: { code: '57P01' } });
    expect(aFinish).toMatchObject({ status: 'rejected', reason: { code: '57P01' } });
    expect(b.claim.settled() || b.finish.settled()).toBe(false);
    // A wrote nothing and was not sent again (whether a session's end came before its commit is not known).
    expect(watched.sends.filter((s) => s.keys.includes(`run:${xa}`))).toHaveLength(1);
    expect(await direct().prisma.actionRun.count({ where: { run_id: xa } })).toBe(0);
    await holdA.rollback();
    expect((await direct().prisma.flowRun.findUniqueOrThrow({ where: { id: yaRun } })).status).toBe('Running');

    await holdB.commit();
    const [bClaim, bFinish] = await Promise.all([b.claim.promise, b.finish.promise]);
    expect(bClaim).toMatchObject({ status: 'fulfilled', value: { runOpen: true, row: { sequence: 1, attempts: 1 } } });
    expect(bFinish).toMatchObject({ status: 'fulfilled', value: 'Completed' });
    for (const holder of holders.slice(2)) await holder.commit();
    await Promise.all(claims);
    // The replay sends A's items again (as after a reclaim): each written once.
    const again = await Promise.all([
      transitionInBatch(deps, stepClaim(worker, xa, 1)),
      finishInBatch(deps, { ...ya, now: new Date() }),
    ]);
    expect(again).toMatchObject([{ runOpen: true, row: { sequence: 1, attempts: 1 } }, 'Completed']);
    expect(watched.crossed).toEqual([]);
    expect(await historyOf(direct(), xa)).toEqual(['run.started', 'run.running', 'action.started#1']);
    for (const finished of [yaRun, ybRun])
      expect((await historyOf(direct(), finished)).filter((t) => t === 'run.completed')).toHaveLength(1);
  });

  it.each([1, 2])(
    'a pool of %i connection(s) under rounds waiting for one: nothing hangs, every item is written once',
    async (poolSize) => {
      const pool = await createDatabase({ kind: 'postgres', url: direct().url!, poolSize });
      try {
        const watched = watchSends(pool);
        // A short wait for a connection: a round of run items that gets none goes again kind by kind.
        const deps = engineOn(watched.db, { transaction_wait_ms: 200 });
        const p = `pool${poolSize}`;
        const [h, a, b, c, d, e, f, g] = await runsNamed(direct(), p, ['h', 'a', 'b', 'c', 'd', 'e', 'f', 'g']);
        const finishes = await Promise.all([c, e, g].map((run) => readyToFinish(direct(), run, worker, { run })));
        // Every connection but one taken by a transaction left open; h's claim takes the last one and
        // waits on h's row, held by the test.
        const busy = gate();
        const taken = Array.from({ length: poolSize - 1 }, () => pool.driver.transaction(() => busy.promise));
        const holder = await holdRuns(direct().url!, [h]);
        const letGo = async () => {
          busy.open();
          await Promise.all(taken);
          await holder.commit().catch(() => undefined);
        };
        try {
          const held = tracked(transitionInBatch(deps, stepClaim(worker, h, 1)));
          await waitForWaiters(direct(), holder.pid);
          // h's claim slow: from here the rule lets three slots out.
          const hSent = watched.sends.find((s) => s.keys.includes(`run:${h}`))!;
          await waitFor('h to be slow', async () =>
            performance.now() - hSent.at > slowStatementMs + 5 ? true : undefined,
          );
          // a's and b's claims, each submitted in a turn of its own, go alone beside h's (slow) at the end of
          // their turns (ADR 0083), filling the three slots it lets out; c's finish and d's and f's claims
          // wait, and go as one round when a fourth slot opens (a slow).
          const items: { promise: Promise<PromiseSettledResult<unknown>>; settled: () => boolean }[] = [];
          for (const run of [a, b]) {
            items.push(tracked(transitionInBatch(deps, stepClaim(worker, run, 1))));
            await turnEnd();
          }
          items.push(
            tracked(finishInBatch(deps, finishes[0]!)),
            tracked(transitionInBatch(deps, stepClaim(worker, d, 1))),
            tracked(transitionInBatch(deps, stepClaim(worker, f, 1))),
          );
          const round = await waitFor('a round to go', async () => watched.sends.find((s) => s.round));
          expect(round.beside).toHaveLength(3);
          // Every slot is out now: these wait in the queue, a start among them.
          items.push(
            tracked(startInBatch(watched.db.driver, startOf(flowName, worker, `${p}-k1`))),
            tracked(finishInBatch(deps, finishes[1]!)),
            tracked(finishInBatch(deps, finishes[2]!)),
          );
          // The round gets no connection in its wait: its kinds go again as statements of their own.
          await waitFor('the round to go again kind by kind', async () =>
            watched.sends.some((s) => !s.round && s.keys.includes(`run:${d}`) && s.keys.includes(`run:${f}`))
              ? true
              : undefined,
          );
          // Longer than the run items' wait for a connection (they wait again), shorter than a lone start's.
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          expect(held.settled()).toBe(false);
          await letGo();
          const settled = await Promise.all([held.promise, ...items.map((i) => i.promise)]);
          expect(settled.map((s) => s.status)).toEqual(Array(settled.length).fill('fulfilled'));
          expect(watched.crossed).toEqual([]);
          for (const run of [h, a, b, d, f])
            expect(await historyOf(direct(), run)).toEqual(['run.started', 'run.running', 'action.started#1']);
          for (const run of [c, e, g])
            expect((await historyOf(direct(), run)).filter((t) => t === 'run.completed')).toHaveLength(1);
          expect(await direct().prisma.flowRun.count({ where: { business_key: `${p}-k1` } })).toBe(1);
        } finally {
          await letGo();
        }
      } finally {
        await pool.close();
      }
    },
  );
});
