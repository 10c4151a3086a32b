import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Database } from '../../../src/db/database.ts';
import { defineFlow } from '../../../src/index.ts';
import { startInBatch } from '../../../src/api/start-in-batch.ts';
import type { FusableDeps } from '../../../src/runtime/replay/fused-outcome.ts';
import { finishInBatch, transitionInBatch } from '../../../src/runtime/run-statement-batches.ts';
import {
  stepTransitionResults,
  stepTransitionsStatement,
  type TransitionResult,
} from '../../../src/store/step-transitions.ts';
import { activeRun } from '../../support/active-run.ts';
import { countStatements } from '../../support/count-statements.ts';
import {
  activeLones,
  historyOf,
  loneClaims,
  lonesBeforeRound,
  readyToFinish,
  sentAlone,
  sentKinds,
  settleAfterLones,
  startOf,
  stepClaim,
} from '../../support/round-items.ts';
import { openTestDatabase } from '../../support/test-database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bareEngine } from '../harness.ts';

/**
 * Review 14 (ADR 0070): a round (ADR 0066) holds the locks of its earlier statements until its one
 * commit. These tests close lock cycles between a round and another writer, and between two
 * handles' rounds, end a round's backend while it waits, and refuse one item of a round: every item
 * must meet its own fate exactly once, and nothing of a round that did not commit may stay.
 */
const worker = 'review14-worker';
const flow = defineFlow({ name: 'review14-rounds', version: 1, run: async () => null });

describe('rounds against other writers (PostgreSQL)', () => {
  let db: (Database & { url?: string }) | undefined;
  let other: Database | undefined;
  let holder: pg.Client | undefined;
  let lateCheck: Database | undefined;
  beforeAll(async () => {
    db = await openTestDatabase();
    // A second handle on the same database: another engine process's pool and batcher.
    other = await createDatabase({ kind: 'postgres', url: db.url!, poolSize: 4 });
    // A handle whose backends check for a deadlock only after 5 s of waiting (the server's 1 s
    // otherwise): a backend checks once per wait, so a cycle must close before its check to end it.
    const url = new URL(db.url!);
    url.searchParams.set('options', '-c deadlock_timeout=5s');
    lateCheck = await createDatabase({ kind: 'postgres', url: url.toString(), poolSize: 4 });
    holder = new pg.Client({ connectionString: db.url! });
    await holder.connect();
  });
  afterAll(async () => {
    await holder?.end();
    await lateCheck?.close();
    await other?.close();
    await db?.close();
  });
  const direct = () => db!;
  const side = () => holder!;
  const engineOn = (handle: Database) => bareEngine(handle, { flows: [flow], actions: [] }).runtime as FusableDeps;

  /** Backends of the test database waiting for a lock, other than `except`'s. */
  const lockWaiters = async (except: number) =>
    (
      await direct().prisma.$queryRaw<{ pid: number; query: string }[]>`
        select pid, query from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock' and pid <> ${except}`
    ).filter((w) => !w.query.includes('pg_stat_activity'));
  const sidePid = async () => (await side().query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const lockRun = (runId: string) =>
    side().query(`select id from sagaflow.flow_runs where id = $1 for update`, [runId]);

  /** Lone transitions that go at once, and two runs whose transition and finish then wait together: one round. */
  const roundOfTwo = async (prefix: string) => {
    const lones = await activeLones(direct(), prefix, worker);
    const [x, y] = await Promise.all([
      activeRun(direct(), `${prefix}-x`, worker),
      activeRun(direct(), `${prefix}-y`, worker),
    ]);
    return { lones, x, finish: await readyToFinish(direct(), y, worker, { y: prefix }) };
  };
  /**
   * A round of x's transition and y's finish (after the lone transitions) sent while the side writer holds
   * y, as a terminate or a repair would, with its deadlock check after `deadlockTimeout`: returned once
   * the round has claimed x (its transitions statement ran) and waits for y in its finishes statement.
   */
  const roundWaitingOnHeldRun = async (prefix: string, deadlockTimeout: string, handle = direct()) => {
    const counted = countStatements(handle);
    const deps = engineOn(counted.db);
    const { lones, x, finish } = await roundOfTwo(prefix);
    const pid = await sidePid();
    await side().query('begin');
    await side().query(`set local deadlock_timeout = '${deadlockTimeout}'`);
    await lockRun(finish.runId);
    counted.sent.length = 0;
    const settled = settleAfterLones(await loneClaims(deps, worker, lones), [
      transitionInBatch(deps, stepClaim(worker, x, 1)),
      finishInBatch(deps, finish),
    ]);
    await waitFor('the round to wait for y', async () => ((await lockWaiters(pid)).length > 0 ? true : undefined));
    return { counted, x, finish, settled };
  };

  it('a deadlock between a round and a writer holding the finished run ends the round, and its items then go alone', async () => {
    // The writer's own deadlock check comes late (20 s); the round's after 5 s, however long the test
    // takes to see the round wait and ask for x (it had 1 s, which a loaded machine can miss).
    const shown = await lateCheck!.pool!.query<{ deadlock_timeout: string }>('show deadlock_timeout');
    expect(shown.rows[0]?.deadlock_timeout).toBe('5s');
    const { counted, x, finish, settled } = await roundWaitingOnHeldRun('dl-round', '20s', lateCheck);
    // The writer now asks for x: a cycle. The round's backend checks first (5 s) and is ended with 40P01.
    const writerGotX = lockRun(x);
    await writerGotX;
    await side().query('commit');
    const [first, moved, finished] = await settled;
    expect(first.status).toBe('fulfilled');
    // Alone, after the writer: x's claim is fresh (the round's was rolled back), y finishes once.
    expect(moved).toMatchObject({ status: 'fulfilled', value: { runOpen: true, row: { sequence: 1, attempts: 1 } } });
    expect(finished).toMatchObject({ status: 'fulfilled', value: 'Completed' });
    expect(sentKinds(counted.sent)).toEqual([
      ...sentAlone(),
      ['transitions', 1],
      ['finishes', 1],
      ['transitions', null],
      ['finishes', null],
    ]);
    expect(await historyOf(direct(), x)).toEqual(['run.started', 'run.running', 'action.started#1']);
    expect(await historyOf(direct(), finish.runId)).toEqual([
      'run.started',
      'run.running',
      'action.started#1',
      'action.completed#1',
      'run.completed',
    ]);
    expect(await direct().prisma.actionRun.count({ where: { run_id: x } })).toBe(1);
  });

  it('a deadlock that ends the other writer lets the round commit once, as sent', async () => {
    // This time the writer's check comes first: the writer is the one ended.
    const { counted, x, finish, settled } = await roundWaitingOnHeldRun('dl-writer', '50ms');
    await expect(lockRun(x)).rejects.toMatchObject({ code: '40P01' });
    await side().query('rollback');
    const [first, moved, finished] = await settled;
    expect(first.status).toBe('fulfilled');
    expect(moved).toMatchObject({ status: 'fulfilled', value: { runOpen: true, row: { sequence: 1, attempts: 1 } } });
    expect(finished).toMatchObject({ status: 'fulfilled', value: 'Completed' });
    expect(sentKinds(counted.sent)).toEqual([...sentAlone(), ['transitions', 1], ['finishes', 1]]);
    expect(await historyOf(direct(), x)).toEqual(['run.started', 'run.running', 'action.started#1']);
    expect((await historyOf(direct(), finish.runId)).filter((t) => t === 'run.completed')).toHaveLength(1);
  });

  it("two handles' rounds crossing on two runs: a deadlock, and still one outcome per step and one finish per run", async () => {
    // Two processes replaying the same two runs (a lease lost and reclaimed while the old holder runs):
    // one finishes a and moves b on, the other finishes b and moves a on.
    const countedA = countStatements(direct());
    const countedB = countStatements(other!);
    const depsA = engineOn(countedA.db);
    const depsB = engineOn(countedB.db);
    const [lonesA, lonesB, a, b] = await Promise.all([
      activeLones(direct(), 'cross-a', worker),
      activeLones(direct(), 'cross-b', worker),
      activeRun(direct(), 'cross-a', worker),
      activeRun(direct(), 'cross-b', worker),
    ]);
    const finishA = await readyToFinish(direct(), a, worker, { a: 1 });
    const finishB = await readyToFinish(direct(), b, worker, { b: 1 });
    const pid = await sidePid();
    // Held until both rounds wait on it, so that their transitions run at the same moment.
    await side().query('begin');
    await lockRun(a);
    await lockRun(b);
    countedA.sent.length = 0;
    countedB.sent.length = 0;
    const settled = Promise.all([
      settleAfterLones(await loneClaims(depsA, worker, lonesA), [
        transitionInBatch(depsA, stepClaim(worker, a, 2)),
        finishInBatch(depsA, finishB),
      ]),
      settleAfterLones(await loneClaims(depsB, worker, lonesB), [
        transitionInBatch(depsB, stepClaim(worker, b, 2)),
        finishInBatch(depsB, finishA),
      ]),
    ]).then((both) => both.flat());
    await waitFor('both rounds to wait on the held runs', async () =>
      (await lockWaiters(pid)).length >= 2 ? true : undefined,
    );
    await side().query('commit');
    const results = await settled;
    // Nothing hangs and nothing is lost: every item settles, an item of the round the server ended
    // is sent again alone and meets the fate it meets after the other round.
    expect(results.map((r) => r.status)).toEqual(Array(6).fill('fulfilled'));
    const rounds = [...countedA.sent, ...countedB.sent].filter((s) => s.round !== undefined);
    expect(rounds.length).toBeGreaterThanOrEqual(4);
    for (const runId of [a, b]) {
      const history = await historyOf(direct(), runId);
      expect(
        history.filter((t) => t === 'run.completed'),
        `${runId}: ${history.join(', ')}`,
      ).toHaveLength(1);
      expect(history.filter((t) => t === 'action.started#1')).toHaveLength(1);
      expect(history.filter((t) => t === 'action.completed#1')).toHaveLength(1);
      expect(history.filter((t) => t === 'action.started#2').length).toBeLessThanOrEqual(1);
      expect(await direct().prisma.actionRun.count({ where: { run_id: runId, sequence: 2 } })).toBeLessThanOrEqual(1);
      const run = await direct().prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
      expect(run.status).toBe('Completed');
    }
  });

  it("a round's backend ended while it waits gives every item the session's error, writes nothing, and the pool goes on", async () => {
    const counted = countStatements(direct());
    const deps = engineOn(counted.db);
    const { lones, x, finish } = await roundOfTwo('kill');
    const pid = await sidePid();
    await side().query('begin');
    await lockRun(finish.runId);
    counted.sent.length = 0;
    const settled = settleAfterLones(await loneClaims(deps, worker, lones), [
      transitionInBatch(deps, stepClaim(worker, x, 1)),
      finishInBatch(deps, finish),
    ]);
    const [waiter] = await waitFor('the round to wait for y', async () => {
      const waiting = await lockWaiters(pid);
      return waiting.length > 0 ? waiting : undefined;
    });
    await direct().prisma.$queryRaw`select pg_terminate_backend(${waiter!.pid}::int)`;
    const [first, moved, finished] = await settled;
    await side().query('rollback');
    expect(first.status).toBe('fulfilled');
    expect(moved).toMatchObject({ status: 'rejected', reason: { code: '57P01' } });
    expect(finished).toMatchObject({ status: 'rejected', reason: { code: '57P01' } });
    // Neither was sent again: whether a session's end came before or after its commit is not known.
    expect(sentKinds(counted.sent)).toEqual([...sentAlone(), ['transitions', 1], ['finishes', 1]]);
    // The round wrote nothing: x's step is unclaimed, y still runs.
    expect(await direct().prisma.actionRun.count({ where: { run_id: x } })).toBe(0);
    expect((await direct().prisma.flowRun.findUniqueOrThrow({ where: { id: finish.runId } })).status).toBe('Running');
    // The replay sent again (as after a reclaim): each item once, as a fresh round of the same two.
    const again = await settleAfterLones(await loneClaims(deps, worker, lones, 2), [
      transitionInBatch(deps, stepClaim(worker, x, 1)),
      finishInBatch(deps, { ...finish, now: new Date() }),
    ]);
    expect(again.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(again[1]).toMatchObject({ value: { runOpen: true, row: { sequence: 1, attempts: 1 } } });
    expect(await historyOf(direct(), x)).toEqual(['run.started', 'run.running', 'action.started#1']);
    expect((await historyOf(direct(), finish.runId)).filter((t) => t === 'run.completed')).toHaveLength(1);
  });

  it('a start refused in a round (its business key taken) fails as alone, and the round’s other items are written once', async () => {
    const counted = countStatements(direct());
    const deps = engineOn(counted.db);
    const { lones, x, finish } = await roundOfTwo('dup');
    const taken = await startInBatch(direct().driver, startOf('review14-rounds', worker, 'dup-key'));
    const alone = await startInBatch(direct().driver, startOf('review14-rounds', worker, 'dup-key')).catch(
      (err: unknown) => err,
    );
    expect(alone).toMatchObject({ code: '23505' });
    counted.sent.length = 0;
    const [first, started, moved, finished] = await settleAfterLones(await loneClaims(deps, worker, lones), [
      startInBatch(counted.db.driver, startOf('review14-rounds', worker, 'dup-key')),
      transitionInBatch(deps, stepClaim(worker, x, 1)),
      finishInBatch(deps, finish),
    ]);
    expect(first.status).toBe('fulfilled');
    expect(started).toMatchObject({
      status: 'rejected',
      reason: { code: '23505', constraint: (alone as { constraint: string }).constraint },
    });
    expect(moved).toMatchObject({ status: 'fulfilled', value: { runOpen: true, row: { sequence: 1, attempts: 1 } } });
    expect(finished).toMatchObject({ status: 'fulfilled', value: 'Completed' });
    // The start, x's transition and y's finish waited for a lone one's return and went as one round,
    // refused, then each kind again on its own: here each alone.
    const sent = sentKinds(counted.sent);
    expect(sent.slice(0, lonesBeforeRound + 3)).toEqual([
      ...sentAlone(),
      ['starts', 1],
      ['transitions', 1],
      ['finishes', 1],
    ]);
    expect(
      sent
        .slice(lonesBeforeRound + 3)
        .map(([kind, round]) => `${kind} ${round}`)
        .sort(),
    ).toEqual(['finishes null', 'starts null', 'transitions null']);
    expect(await direct().prisma.flowRun.count({ where: { business_key: 'dup-key' } })).toBe(1);
    expect((await direct().prisma.flowRun.findFirstOrThrow({ where: { business_key: 'dup-key' } })).id).toBe(
      taken.runId,
    );
    expect(await historyOf(direct(), x)).toEqual(['run.started', 'run.running', 'action.started#1']);
    expect((await historyOf(direct(), finish.runId)).filter((t) => t === 'run.completed')).toHaveLength(1);
  });

  it("a terminated run's transition in a round is fenced out as alone, and the round's other items commit", async () => {
    const counted = countStatements(direct());
    const deps = engineOn(counted.db);
    const { lones, x, finish } = await roundOfTwo('term');
    const engine = bareEngine(direct(), { flows: [flow], actions: [] });
    expect(await engine.terminate(x, { reason: 'review14' })).toEqual({ terminated: true });
    counted.sent.length = 0;
    const [first, moved, finished] = await settleAfterLones(await loneClaims(deps, worker, lones), [
      transitionInBatch(deps, stepClaim(worker, x, 1)),
      finishInBatch(deps, finish),
    ]);
    expect(first.status).toBe('fulfilled');
    expect(moved).toMatchObject({ status: 'fulfilled', value: { runOpen: false } });
    expect(finished).toMatchObject({ status: 'fulfilled', value: 'Completed' });
    expect(sentKinds(counted.sent)).toEqual([...sentAlone(), ['transitions', 1], ['finishes', 1]]);
    expect(await direct().prisma.actionRun.count({ where: { run_id: x } })).toBe(0);
    expect((await direct().prisma.flowRun.findUniqueOrThrow({ where: { id: x } })).status).toBe('Terminated');
  });

  it("a cancelled run's transition in a round meets what it meets alone, and the round's other items commit", async () => {
    const counted = countStatements(direct());
    const deps = engineOn(counted.db);
    const { lones, x, finish } = await roundOfTwo('cancel');
    const twin = await activeRun(direct(), 'cancel-twin', worker);
    const engine = bareEngine(direct(), { flows: [flow], actions: [] });
    for (const runId of [x, twin])
      expect(await engine.cancel(runId, { reason: 'review14' })).toEqual({ requested: true });
    // The twin's transition alone: what x's must meet in the round.
    const claim = [stepClaim(worker, twin, 1)];
    const alone = stepTransitionResults(claim, await direct().driver.statement(stepTransitionsStatement(claim)))[0]!;
    counted.sent.length = 0;
    const [first, moved, finished] = await settleAfterLones(await loneClaims(deps, worker, lones), [
      transitionInBatch(deps, stepClaim(worker, x, 1)),
      finishInBatch(deps, finish),
    ]);
    expect(first.status).toBe('fulfilled');
    expect(finished).toMatchObject({ status: 'fulfilled', value: 'Completed' });
    expect(sentKinds(counted.sent)).toEqual([...sentAlone(), ['transitions', 1], ['finishes', 1]]);
    const inRound = (moved as PromiseFulfilledResult<TransitionResult>).value;
    const shape = (r: TransitionResult) =>
      JSON.stringify(r, (k, v: unknown) =>
        k === 'id' || k.endsWith('_at') || k === 'runId' || k === 'run_id' ? undefined : v,
      );
    // A cancel requested before the claim fences it out, as alone: no row, the run not open to it.
    expect(inRound).toMatchObject({ runOpen: false, row: null });
    expect(shape(inRound)).toBe(shape(alone));
    const types = async (runId: string) => (await historyOf(direct(), runId)).filter((t) => !t.startsWith('run.'));
    expect(await types(x)).toEqual(await types(twin));
  });
});
