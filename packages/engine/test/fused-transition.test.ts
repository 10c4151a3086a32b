import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { defineAction, defineFlow } from '../src/index.ts';
import { executeRun } from '../src/runtime/execute-run.ts';
import { insertStep } from '../src/store/insert-step.ts';
import { countStatements } from './support/count-statements.ts';
import { completedStepsHistory, stepHistory } from './support/step-history.ts';
import { openTestDatabase, testDbKind } from './support/test-database.ts';
import { bareEngine } from './regressions/harness.ts';

/**
 * ADR 0042: a new step's transition and a top-level run's finish are each ONE autocommitted
 * statement; when the statement writes nothing, the run's transaction does what it always did.
 */
const noop = (name: string) => defineAction({ name, run: async () => ({ done: name }) });
const [one, two, three] = [noop('fused-one'), noop('fused-two'), noop('fused-three')];
const threeSteps = defineFlow({
  name: 'fused-three-steps',
  version: 1,
  run: async (ctx) => {
    await ctx.action(one, null);
    await ctx.action(two, null);
    return ctx.action(three, null);
  },
});

describe(`one statement per step transition (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const history = (runId: string) => stepHistory(db, runId);

  it('a 3-step flow of no-op actions sends 1 statement per transition and 1 for the finish, no transaction but the load', async () => {
    const counted = countStatements(db);
    const e = bareEngine(counted.db, { flows: [threeSteps], actions: [one, two, three] });
    const { runId } = await e.startFlow(threeSteps, null);
    counted.sent.length = 0;
    expect(await executeRun(e.runtime, runId)).toBe('finished');
    const sent = counted.sent.map((s) => (s.inTransaction ? `tx: ${s.text.slice(0, 30)}` : s.text.slice(0, 30)));
    // The load (its own transaction: BEGIN, one statement, COMMIT, ADR 0037), then 3 + 1 statements.
    // A handed-off start skips the load (ADR 0041): a flow is then 1 (start) + 4 statements.
    expect(
      counted.sent.filter((s) => s.text === 'BEGIN'),
      sent.join('\n'),
    ).toHaveLength(1);
    expect(
      counted.sent.filter((s) => !s.inTransaction),
      sent.join('\n'),
    ).toHaveLength(4);
    expect(counted.sent.length, sent.join('\n')).toBeLessThanOrEqual(7);
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect([run.status, run.output]).toEqual(['Completed', { done: 'fused-three' }]);
    expect(await history(runId)).toEqual(completedStepsHistory(3));
    const steps = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    expect(steps.map((s) => [s.sequence, s.status, s.attempts, s.claimed_by, s.started_at !== null])).toEqual(
      [1, 2, 3].map((n) => [n, 'Completed', 1, e.runtime.workerId, true]),
    );
  });

  it('an outcome rejected because an operator completed the step: the statement writes nothing, the transaction journals outcome_rejected as before', async () => {
    const settledByOperator = defineAction({
      name: 'fused-settled-by-operator',
      run: async () => {
        // While this step runs (Running, attempt 1), an operator completes it with their own output.
        const run = await db.prisma.flowRun.findFirstOrThrow({ where: { flow_name: 'fused-rejected' } });
        await e.repairs.apply({
          kind: 'run.complete_step',
          target: { runId: run.id, stepSequence: 1 },
          expected: { runStatus: 'Running', stepStatus: 'Running', stepAttempts: 1 },
          output: { from: 'operator' },
          actor: 'fused-test',
          reason: 'settled by hand while it ran',
          idempotencyKey: `fused-${run.id}`,
        });
        return { from: 'worker' };
      },
    });
    const flow = defineFlow({
      name: 'fused-rejected',
      version: 1,
      run: async (ctx) => [await ctx.action(settledByOperator, null), await ctx.action(two, null)],
    });
    const counted = countStatements(db);
    const e = bareEngine(counted.db, { flows: [flow], actions: [settledByOperator, two] });
    const rejected: number[] = [];
    e.events.on('action.outcome_rejected', (ev) => void rejected.push(ev.sequence));
    const { runId } = await e.startFlow(flow, null);
    expect(await executeRun(e.runtime, runId)).not.toBe('finished');
    // The step-2 transition was sent as one statement, wrote nothing, and the transaction followed.
    // Step 1's transition statement, then step 2's, carrying step 1's outcome (the same text, ADR 0045).
    const transitions = counted.sent.flatMap((s, at) =>
      !s.inTransaction && s.text.includes('insert into "sagaflow"."action_runs"') && s.text.includes('upd as')
        ? [at]
        : [],
    );
    expect(transitions).toHaveLength(2);
    const fusedAt = transitions[1]!;
    expect(counted.sent[fusedAt + 1]?.text).toBe('BEGIN');
    const anomalies = await db.prisma.anomalyLog.findMany({ where: { run_id: runId } });
    expect(anomalies.map((a) => [a.code, a.sequence])).toEqual([['outcome_rejected', 1]]);
    expect(rejected).toEqual([1]);
    const step1 = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 1 } });
    expect([step1.status, step1.output, step1.attempts]).toEqual(['Completed', { from: 'operator' }, 1]);
    expect(await db.prisma.actionRun.count({ where: { run_id: runId, sequence: 2 } })).toBe(0);
    // The one action.completed of step 1 is the operator's (the repair writes it; the row holds its output).
    expect((await history(runId)).filter((t) => t.startsWith('action.'))).toEqual([
      'action.started#1',
      'action.completed#1',
    ]);

    // The operator's wake brings a fresh replay, which goes on from the operator's output.
    expect(await executeRun(e.runtime, runId)).toBe('finished');
    const run = await db.prisma.flowRun.findUniqueOrThrow({ where: { id: runId } });
    expect([run.status, run.output]).toEqual(['Completed', [{ from: 'operator' }, { done: 'fused-two' }]]);
  });

  it('another replay scheduled the next step first: the outcome is recorded once, no second row, the step runs once', async () => {
    const ran: number[] = [];
    let runId = '';
    const first = defineAction({
      name: 'fused-race-first',
      run: async () => {
        // Another replay of this run gets to step 2 first and schedules it (its insert commits).
        await insertStep(db.prisma, { runId, sequence: 2, kind: 'action', name: 'fused-race-second', input: null });
        return 'first';
      },
    });
    const second = defineAction({
      name: 'fused-race-second',
      run: async () => {
        ran.push(2);
        return 'second';
      },
    });
    const flow = defineFlow({
      name: 'fused-raced',
      version: 1,
      run: async (ctx) => [await ctx.action(first, null), await ctx.action(second, null)],
    });
    const e = bareEngine(db, { flows: [flow], actions: [first, second] });
    const completed: number[] = [];
    e.events.on('action.completed', (ev) => void completed.push(ev.sequence));
    ({ runId } = await e.startFlow(flow, null));
    expect(await executeRun(e.runtime, runId)).toBe('finished');
    const steps = await db.prisma.actionRun.findMany({ where: { run_id: runId }, orderBy: { sequence: 'asc' } });
    expect(steps.map((s) => [s.sequence, s.status, s.attempts])).toEqual([
      [1, 'Completed', 1],
      [2, 'Completed', 1],
    ]);
    expect(ran).toEqual([2]);
    expect(completed).toEqual([1, 2]);
    expect(await history(runId)).toEqual([
      'run.started',
      'run.running',
      'action.started#1',
      'action.completed#1',
      'action.started#2',
      'action.completed#2',
      'run.completed',
    ]);
    expect(await db.prisma.anomalyLog.count({ where: { run_id: runId } })).toBe(0);
  });
});
