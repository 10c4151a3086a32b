import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { finishTopRunResults, finishTopRunsStatement, type TopRunFinish } from '../../src/store/finish-top-runs.ts';
import {
  stepTransitionResults,
  stepTransitionsStatement,
  type StepTransition,
  type TransitionOutcome,
} from '../../src/store/step-transitions.ts';
import { activeRun as writeActiveRun } from '../support/active-run.ts';
import { heldFirstTransitions } from '../support/held-first-transitions.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';

/**
 * ADR 0045: several runs' step transitions (or finishes) go as ONE set-based statement. Each run in
 * it meets exactly its own gates, whatever the others meet; a batch that fails is sent again item by item.
 */
const worker = 'batch-test-worker';

describe(`several runs in one statement (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const history = async (runId: string) =>
    (await db.prisma.flowEvent.findMany({ where: { run_id: runId }, orderBy: { id: 'asc' } })).map((e) =>
      e.sequence === null ? e.type : `${e.type}#${e.sequence}`,
    );

  /** A run written active, as a start handed to this worker leaves it. */
  const activeRun = (flowName: string) => writeActiveRun(db, flowName, worker);

  const transition = (runId: string, sequence: number, outcome?: TransitionOutcome): StepTransition => ({
    step: {
      runId,
      sequence,
      kind: 'action',
      name: `step-${sequence}`,
      input: { n: sequence },
      reclaimAfterSeconds: 30,
    },
    workerId: worker,
    now: new Date(),
    cancellationKnown: false,
    started: { type: 'action.started', sequence, data: {} },
    ...(outcome ? { outcome } : {}),
  });

  const completion = async (runId: string, sequence: number): Promise<TransitionOutcome> => {
    const row = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence } });
    return {
      table: 'action_runs',
      id: row.id,
      attempts: 1,
      outcome: { kind: 'completed', output: { done: sequence } },
      event: { type: 'action.completed', sequence, data: {} },
    };
  };

  const transitions = async (items: StepTransition[]) =>
    stepTransitionResults(items, await db.driver.statement(stepTransitionsStatement(items)));

  it("each run's transition meets its own gates: a terminated run, an operator's completion, an unseen cancellation and another replay's row close only their own", async () => {
    const runs = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((n) => activeRun(`batch-transitions-${n}`)));
    const [a, b, c, d, e] = runs as [string, string, string, string, string];
    // Step 1 of all five, claimed in one statement (no outcome to carry).
    const first = await transitions(runs.map((r) => transition(r, 1)));
    expect(first.map((r) => [r.runOpen, r.recorded, r.row?.status, r.row?.attempts, r.row?.claimed_by])).toEqual(
      runs.map(() => [true, false, 'Running', 1, worker]),
    );
    const outcomes = await Promise.all(runs.map((r) => completion(r, 1)));
    // Then, each in its own way: b terminated, c's step 1 completed by an operator, d cancelled
    // (this replay has not seen it), e's step 2 scheduled by another replay first.
    await db.prisma.flowRun.update({ where: { id: b }, data: { status: 'Terminated', finished_at: new Date() } });
    await db.prisma.actionRun.updateMany({
      where: { run_id: c, sequence: 1 },
      data: { status: 'Completed', output: { from: 'operator' } },
    });
    await db.prisma.flowRun.update({ where: { id: d }, data: { cancel_requested_at: new Date() } });
    await db.prisma.actionRun.create({
      data: { run_id: e, sequence: 2, kind: 'action', name: 'step-2', input: { other: true }, status: 'Pending' },
    });

    const sent = await transitions(runs.map((r, i) => transition(r, 2, outcomes[i])));
    expect(sent.map((r) => [r.runOpen, r.recorded, r.row?.sequence ?? null])).toEqual([
      [true, true, 2],
      [false, false, null],
      [true, false, null],
      [false, false, null],
      [true, true, null],
    ]);
    const steps = async (runId: string) =>
      (await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } })).map((s) => [
        s.sequence,
        s.status,
        s.output,
        s.claimed_by,
      ]);
    expect(await steps(a)).toEqual([
      [1, 'Completed', { done: 1 }, worker],
      [2, 'Running', null, worker],
    ]);
    expect(await steps(b)).toEqual([[1, 'Running', null, worker]]);
    expect(await steps(c)).toEqual([[1, 'Completed', { from: 'operator' }, worker]]);
    expect(await steps(d)).toEqual([[1, 'Running', null, worker]]);
    expect(await steps(e)).toEqual([
      [1, 'Completed', { done: 1 }, worker],
      [2, 'Pending', null, null],
    ]);
    const before = ['run.started', 'run.running', 'action.started#1'];
    expect(await history(a)).toEqual([...before, 'action.completed#1', 'action.started#2']);
    for (const closed of [b, c, d]) expect(await history(closed)).toEqual(before);
    expect(await history(e)).toEqual([...before, 'action.completed#1']);
    // The cancellation, once known, lets d's transition through.
    const known = await transitions([{ ...transition(d, 2, outcomes[3]), cancellationKnown: true }]);
    expect(known.map((r) => [r.runOpen, r.recorded, r.row?.sequence])).toEqual([[true, true, 2]]);
  });

  it("each run's finish meets its own gates: an open stuck episode closed, an expired run ends Expired, a child and a fenced-out outcome write nothing", async () => {
    const runs = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((n) => activeRun(`batch-finishes-${n}`)));
    const [a, b, c, d, e] = runs as [string, string, string, string, string];
    await transitions(runs.map((r) => transition(r, 1)));
    const outcomes = await Promise.all(runs.map((r) => completion(r, 1)));
    // b in a stuck episode; c expired by the monitor; d a child of a; e's step retaken (attempts 2).
    await db.prisma.flowRun.update({ where: { id: b }, data: { stuck_reason: 'lease_lost: test' } });
    await db.prisma.flowEvent.create({ data: { run_id: b, type: 'run.stuck', data: { reason: 'lease_lost: test' } } });
    await db.prisma.flowRun.update({ where: { id: c }, data: { expired_at: new Date() } });
    await db.prisma.flowRun.update({ where: { id: d }, data: { parent_run_id: a, parent_sequence: 9 } });
    await db.prisma.actionRun.updateMany({ where: { run_id: e, sequence: 1 }, data: { attempts: 2 } });
    const jobs = await db.prisma.job.findMany({ where: { run_id: { in: runs } } });
    const jobOf = (runId: string) => jobs.find((j) => j.run_id === runId)!;

    const finish = (runId: string, i: number): TopRunFinish => ({
      runId,
      status: 'Completed',
      output: { run: i },
      data: {},
      now: new Date(),
      outcome: outcomes[i]!,
      ack: { id: jobOf(runId).id, workerId: worker },
    });
    const statuses = finishTopRunResults(await db.driver.statement(finishTopRunsStatement(runs.map(finish))));
    expect(statuses).toEqual(['Completed', 'Completed', 'Expired', null, null]);
    const run = async (id: string) => {
      const r = await db.prisma.flowRun.findUniqueOrThrow({ where: { id } });
      return [r.status, r.output, r.stuck_reason];
    };
    expect(await run(a)).toEqual(['Completed', { run: 0 }, null]);
    expect(await run(b)).toEqual(['Completed', { run: 1 }, null]);
    expect(await run(c)).toEqual(['Expired', { run: 2 }, null]);
    expect(await run(d)).toEqual(['Running', null, null]);
    expect(await run(e)).toEqual(['Running', null, null]);
    const before = ['run.started', 'run.running', 'action.started#1'];
    expect(await history(a)).toEqual([...before, 'action.completed#1', 'run.completed']);
    expect(await history(b)).toEqual([...before, 'run.stuck', 'action.completed#1', 'run.unstuck', 'run.completed']);
    expect(await history(c)).toEqual([...before, 'action.completed#1', 'run.expired']);
    expect(await history(d)).toEqual(before);
    expect(await history(e)).toEqual(before);
    const unstuck = await db.prisma.flowEvent.findFirstOrThrow({ where: { run_id: b, type: 'run.unstuck' } });
    expect(unstuck.data).toEqual({ reason: 'lease_lost: test', by: 'run.completed' });
    // Acknowledged exactly where the run finished.
    const left = await db.prisma.job.findMany({ where: { run_id: { in: runs } } });
    expect(left.map((j) => j.run_id).sort()).toEqual([d, e].sort());
  });

  it('a batch the database refuses is sent again item by item: the good items are written, the bad one fails alone', async () => {
    const runs = await Promise.all(['a', 'b', 'c'].map((n) => activeRun(`batch-fallback-${n}`)));
    const [a, b, c] = runs as [string, string, string];
    const { batcher, sizes, release } = heldFirstTransitions(db);
    const first = batcher.submit(transition(a, 1));
    // While a's statement is out, b's and c's wait and go together; c's step name holds a NUL,
    // which the server refuses (text cannot hold one), so their statement fails as a whole.
    const good = batcher.submit(transition(b, 1));
    const bad = batcher.submit({ ...transition(c, 1), step: { ...transition(c, 1).step, name: 'nul\u0000name' } }).then(
      () => null,
      (err: unknown) => err,
    );
    release();
    await expect(first).resolves.toMatchObject({ runOpen: true });
    await expect(good).resolves.toMatchObject({ runOpen: true, row: { sequence: 1, status: 'Running' } });
    expect(await bad).toBeInstanceOf(Error);
    expect(sizes).toEqual([1, 2, 1, 1]);
    expect(await db.prisma.actionRun.count({ where: { run_id: b } })).toBe(1);
    expect(await db.prisma.actionRun.count({ where: { run_id: c } })).toBe(0);
    expect(await history(c)).toEqual(['run.started', 'run.running']);
  });
});
