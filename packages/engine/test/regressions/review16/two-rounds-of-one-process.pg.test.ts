import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInBatch } from '../../../src/api/start-in-batch.ts';
import type { Database } from '../../../src/db/database.ts';
import { finishInBatch, transitionInBatch } from '../../../src/runtime/run-statement-batches.ts';
import { holdRuns, waitersOn, waitForWaiters } from '../../support/held-rows.ts';
import { historyOf, readyToFinish, startOf, stepClaim } from '../../support/round-items.ts';
import { watchSends } from '../../support/sends-in-flight.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { engineOn, fillSlots, flowName, letGoForRound, runsNamed, tracked, worker } from './support/two-rounds.ts';

/**
 * Review 16 (ADR 0077): two rounds of ONE process out at once (ADR 0076). Round A is held on a row
 * another transaction holds while round B goes beside it. A run whose item is in A (a parallel
 * branch's claim), and a business key whose start is in A, must not ride in B: B would wait on A's
 * row lock or A's unique-index entry, and two rounds of one process crossing on a row could close a
 * lock cycle. B, refused by the server (a business key taken) and resent kind by kind while A is still
 * out, must commit without A; every item meets its own fate once; histories stay in order.
 */
describe('two rounds of one process out at once (PostgreSQL)', () => {
  let db: (Database & { url?: string }) | undefined;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db?.close();
  });
  const direct = () => db!;

  it('keep apart the runs and keys the other carries, and the later one commits while the earlier is held', async () => {
    const watched = watchSends(direct());
    const deps = engineOn(watched.db);
    const { holders, claims } = await fillSlots(direct(), watched, deps, 'apart');
    // Runs: ha (held, so round A waits), r (two parallel branches), f1 and f2 (finish), x (a claim).
    const [ha, r, f2run, x] = await runsNamed(direct(), 'apart', ['ha', 'r', 'f2', 'x']);
    // f1 holds a business key: a start of it goes in B while f1's finish is in A.
    const { runId: f1run } = await startInBatch(direct().driver, startOf(flowName, worker, 'apart-fin'));
    const f1 = await readyToFinish(direct(), f1run, worker, { f: 1 });
    const f2 = await readyToFinish(direct(), f2run, worker, { f: 2 });
    const taken = await startInBatch(direct().driver, startOf(flowName, worker, 'apart-taken'));
    // A's row stays held by the third slot's holder after A goes.
    await holders[2]!.hold(ha);

    // Round A, waiting now: a start, two runs' transitions, a finish.
    const a = {
      start: tracked(startInBatch(watched.db.driver, startOf(flowName, worker, 'apart-k1'))),
      held: tracked(transitionInBatch(deps, stepClaim(worker, ha, 1))),
      branch2: tracked(transitionInBatch(deps, stepClaim(worker, r, 2))),
      finish: tracked(finishInBatch(deps, f1)),
    };
    expect(watched.sends).toHaveLength(4);
    const roundA = await letGoForRound(watched, holders[0]!);
    await waitForWaiters(direct(), holders[2]!.pid, 2);

    // Waiting while A is out: r's other branch and a second start of k1 (their keys are in A), and
    // round B's items: a start of a key already taken (the server refuses B), a claim, a finish.
    const later = {
      branch3: tracked(transitionInBatch(deps, stepClaim(worker, r, 3))),
      twin: tracked(startInBatch(watched.db.driver, startOf(flowName, worker, 'apart-k1'))),
    };
    const b = {
      taken: tracked(startInBatch(watched.db.driver, startOf(flowName, worker, 'apart-taken'))),
      finKey: tracked(startInBatch(watched.db.driver, startOf(flowName, worker, 'apart-fin'))),
      claim: tracked(transitionInBatch(deps, stepClaim(worker, x, 1))),
      finish: tracked(finishInBatch(deps, f2)),
    };
    const roundB = await letGoForRound(watched, holders[1]!);

    // B, its refusal and its resends included, is through while A still waits on ha.
    const [bTaken, bFinKey, bClaim, bFinish] = await Promise.all(Object.values(b).map((t) => t.promise));
    expect(Object.values(a).some((t) => t.settled())).toBe(false);
    expect(Object.values(later).some((t) => t.settled())).toBe(false);
    expect((await waitersOn(direct(), holders[2]!.pid)).length).toBe(2);
    expect(bTaken).toMatchObject({ status: 'rejected', reason: { code: '23505' } });
    expect(bFinKey).toMatchObject({ status: 'rejected', reason: { code: '23505' } });
    expect(bClaim).toMatchObject({ status: 'fulfilled', value: { runOpen: true, row: { sequence: 1, attempts: 1 } } });
    expect(bFinish).toMatchObject({ status: 'fulfilled', value: 'Completed' });
    const sent = (n: number) => watched.sends.find((s) => s.n === n)!;
    expect(sent(roundB).beside).toContain(roundA);
    expect(sent(roundA).keys.sort()).toEqual(
      [`key:${flowName}/apart-k1`, `run:${ha}`, `run:${r}`, `run:${f1run}`].sort(),
    );
    expect(sent(roundB).keys.sort()).toEqual(
      [`key:${flowName}/apart-taken`, `key:${flowName}/apart-fin`, `run:${x}`, `run:${f2run}`].sort(),
    );

    await holders[2]!.commit();
    await holders[3]!.commit();
    const settled = await Promise.all([...Object.values(a), ...Object.values(later)].map((t) => t.promise));
    const [aStart, aHeld, aBranch2, aFinish, branch3, twin] = settled;
    expect(await Promise.all(claims)).toHaveLength(4);
    expect(aStart).toMatchObject({ status: 'fulfilled' });
    expect(aHeld).toMatchObject({ status: 'fulfilled', value: { runOpen: true, row: { sequence: 1 } } });
    expect(aBranch2).toMatchObject({ status: 'fulfilled', value: { runOpen: true, row: { sequence: 2 } } });
    expect(aFinish).toMatchObject({ status: 'fulfilled', value: 'Completed' });
    expect(branch3).toMatchObject({ status: 'fulfilled', value: { runOpen: true, row: { sequence: 3 } } });
    expect(twin).toMatchObject({ status: 'rejected', reason: { code: '23505' } });

    // Never a run or a key in two sends out at once; two rounds were out together.
    expect(watched.crossed).toEqual([]);
    expect(watched.mostOut()).toBeGreaterThanOrEqual(2);
    // r's branches each once, in order; one run per key; each finish once.
    expect(await historyOf(direct(), r)).toEqual([
      'run.started',
      'run.running',
      'action.started#2',
      'action.started#3',
    ]);
    for (const key of ['apart-k1', 'apart-taken', 'apart-fin'])
      expect(await direct().prisma.flowRun.count({ where: { business_key: key } })).toBe(1);
    expect((await direct().prisma.flowRun.findFirstOrThrow({ where: { business_key: 'apart-taken' } })).id).toBe(
      taken.runId,
    );
    for (const finished of [f1run, f2run])
      expect(await historyOf(direct(), finished)).toEqual([
        'run.started',
        'run.running',
        'action.started#1',
        'action.completed#1',
        'run.completed',
      ]);
    expect(await historyOf(direct(), x)).toEqual(['run.started', 'run.running', 'action.started#1']);
  });

  it('a deadlock that ends the earlier round while the later is out: its items go again alone, each once', async () => {
    const watched = watchSends(direct());
    const deps = engineOn(watched.db);
    const { holders, claims } = await fillSlots(direct(), watched, deps, 'victim');
    const [x, yRun, z, wRun] = await runsNamed(direct(), 'victim', ['x', 'y', 'z', 'w']);
    const y = await readyToFinish(direct(), yRun, worker, { y: 1 });
    const w = await readyToFinish(direct(), wRun, worker, { w: 1 });
    // A writer holds y, with its own deadlock check late (20 s). x is held apart for now: A, let go, waits
    // for x while B goes beside it.
    const writer = await holdRuns(direct().url!, [yRun], '20s');
    const xHeld = await holdRuns(direct().url!, [x]);
    const a = {
      claim: tracked(transitionInBatch(deps, stepClaim(worker, x, 1))),
      finish: tracked(finishInBatch(deps, y)),
    };
    const roundA = await letGoForRound(watched, holders[0]!);
    await waitForWaiters(direct(), xHeld.pid);
    // B (z's claim, w's finish) goes beside A, and commits while A waits.
    const b = {
      claim: tracked(transitionInBatch(deps, stepClaim(worker, z, 1))),
      finish: tracked(finishInBatch(deps, w)),
    };
    const roundB = await letGoForRound(watched, holders[1]!);
    expect(watched.sends.find((s) => s.n === roundB)!.beside).toContain(roundA);
    await Promise.all([b.claim.promise, b.finish.promise]);
    // The writer asks for x and queues behind A; x is let go: A takes it and waits for y, the writer's, while
    // the writer waits for A: a cycle. A backend checks for one once per wait, deadlock_timeout into it: the
    // writer, waiting first, would check 20 s in; A checks 1 s into its wait for y and is the victim. (Had the
    // writer asked for x only after A's wait for y began, B's round and the polls could have outlasted A's one
    // check on a loaded machine, and the writer would have been the victim.)
    const writerGotX = writer.hold(x);
    await waitFor('the writer to queue for x behind A', async () => {
      const [row] = await direct().prisma.$queryRaw<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity where pid = ${writer.pid} and wait_event_type = 'Lock'`;
      return row!.n > 0 ? true : undefined;
    });
    await xHeld.commit();
    await writerGotX;
    await writer.commit();
    const [aClaim, aFinish] = await Promise.all([a.claim.promise, a.finish.promise]);
    await holders[2]!.commit();
    await holders[3]!.commit();
    await Promise.all(claims);
    expect(aClaim).toMatchObject({ status: 'fulfilled', value: { runOpen: true, row: { sequence: 1, attempts: 1 } } });
    expect(aFinish).toMatchObject({ status: 'fulfilled', value: 'Completed' });
    // A's kinds went again alone, after the refusal, in A's slot.
    const afterA = watched.sends.filter((s) => s.n > roundA && !s.round).flatMap((s) => s.keys);
    expect(afterA).toEqual(expect.arrayContaining([`run:${x}`, `run:${yRun}`]));
    expect(watched.crossed).toEqual([]);
    expect(await historyOf(direct(), x)).toEqual(['run.started', 'run.running', 'action.started#1']);
    expect(await direct().prisma.actionRun.count({ where: { run_id: x } })).toBe(1);
    for (const finished of [yRun, wRun])
      expect((await historyOf(direct(), finished)).filter((t) => t === 'run.completed')).toHaveLength(1);
    expect(await historyOf(direct(), z)).toEqual(['run.started', 'run.running', 'action.started#1']);
  });
});
