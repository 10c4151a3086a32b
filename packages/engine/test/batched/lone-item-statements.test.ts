import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../../src/definitions/define-action.ts';
import type { Database } from '../../src/db/database.ts';
import type { InputShape } from '../../src/store/batched-statement.ts';
import { finishTopRunResults, finishTopRunsStatement } from '../../src/store/finish-top-runs.ts';
import { insertStartedRun, type StartedRun } from '../../src/store/insert-started-run.ts';
import {
  insertStartedRunsWithStepStatement,
  startedWithStepResults,
} from '../../src/store/insert-started-run-with-step.ts';
import { insertedStartResults, insertStartedRunsStatement } from '../../src/store/insert-started-runs.ts';
import type { StepOutcome } from '../../src/store/record-step-outcome.ts';
import {
  stepTransitionResults,
  stepTransitionsStatement,
  type StepTransition,
  type TransitionOutcome,
} from '../../src/store/step-transitions.ts';
import { openTestDatabase, testDbKind } from '../support/test-database.ts';

/**
 * ADR 0053: a statement carrying one item sends its columns as scalars, under a text of its own. The
 * same work is done twice, once with every statement in the batch's shape (arrays of one) and once
 * in the lone item's, and everything either wrote and returned must be the same: the rows, the
 * history, the results mapped from the rows. Values that only escaping keeps intact (quotes,
 * backslashes, braces, commas, NULL-like text, non-ASCII) ride in every text column.
 */
const worker = 'lone-statement-worker';
const now = new Date('2026-06-01T12:00:00.123Z');
const tricky: Json = { q: `it's "quoted" \\ {a,b} NULL`, u: 'ünï ✓', n: null, list: [1, '2', { x: '}' }] };

describe(`a lone item's statement writes what the batch's writes (${testDbKind()})`, () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const send = (statement: Parameters<Database['driver']['statement']>[0]) => db.driver.statement(statement);

  /** Everything written for `runIds`, rows in a stable order. */
  const written = async (runIds: string[]) => {
    const where = { run_id: { in: runIds } };
    const [runs, steps, events, jobs] = await Promise.all([
      db.prisma.flowRun.findMany({ where: { id: { in: runIds } } }),
      db.prisma.actionRun.findMany({ where, orderBy: { sequence: 'asc' } }),
      db.prisma.flowEvent.findMany({ where, orderBy: { id: 'asc' } }),
      db.prisma.job.findMany({ where, orderBy: { id: 'asc' } }),
    ]);
    const order = <R extends { id: string }>(rows: R[]) => runIds.map((id) => rows.find((r) => r.id === id));
    const byRun = (r: { run_id: string }) => runIds.indexOf(r.run_id);
    return { runs: order(runs), steps: steps.sort((x, y) => byRun(x) - byRun(y)), events, jobs };
  };

  /**
   * `value` with each uuid replaced by its place of first appearance, the shape's own name masked,
   * row ids dropped and the server's clock masked: what remains must not depend on which shape wrote it.
   */
  const normalized = (value: unknown, shape: InputShape): unknown => {
    const ids = new Map<string, string>();
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') {
        if (!uuid.test(v)) return v.replaceAll(shape, '<shape>');
        if (!ids.has(v)) ids.set(v, `uuid#${ids.size}`);
        return ids.get(v);
      }
      if (typeof v === 'bigint') return `bigint`;
      // The statements' times are within an hour of the items' `now`; a column's default is the server's clock.
      if (v instanceof Date)
        return Math.abs(v.getTime() - now.getTime()) < 86_400_000 ? v.getTime() - now.getTime() : 'clock';
      if (Array.isArray(v)) return v.map(walk);
      if (v !== null && typeof v === 'object') {
        const entries = Object.entries(v).filter(([k]) => k !== 'id');
        return Object.fromEntries(entries.map(([k, x]) => [k, walk(x)]));
      }
      return v;
    };
    return walk(value);
  };

  const startedRun = (shape: InputShape, n: number, lease = true): StartedRun => ({
    flowName: `lone-${shape}`,
    flowVersion: 3,
    input: tricky,
    businessKey: `key, "${shape}" \\ {${n}}`,
    tags: ['a,b', `{${shape}}`, 'NULL', 'x"y'],
    expiresAt: new Date(now.getTime() + 3_600_000),
    runTimeoutAt: new Date(now.getTime() + 600_000),
    now,
    lease: lease ? { workerId: worker, leaseSeconds: 60 } : null,
  });

  const transition = (runId: string, sequence: number, outcome?: TransitionOutcome): StepTransition => ({
    step: {
      runId,
      sequence,
      kind: 'action',
      name: `step "${sequence}"`,
      input: tricky,
      maxAttempts: 3,
      parallelBlock: sequence === 2 ? 7 : null,
      reclaimAfterSeconds: 30,
      expiresAt: sequence === 3 ? new Date(now.getTime() + 90_000) : null,
    },
    workerId: worker,
    now,
    cancellationKnown: false,
    started: { type: 'action.started', sequence, data: { note: tricky } },
    ...(outcome ? { outcome } : {}),
  });

  const outcomeOf = (id: string, sequence: number, outcome: StepOutcome): TransitionOutcome => ({
    table: 'action_runs',
    id,
    attempts: 1,
    outcome,
    event: { type: `action.${outcome.kind}`, sequence, data: { detail: tricky } },
  });

  /** A run's steps, each recording the one before under its fence, then its finish; and a cancelled run's gate. */
  const transitionsAndFinish = async (shape: InputShape) => {
    const runId = (await insertStartedRun(db.prisma, startedRun(shape, 1))).runId;
    const cancelled = (await insertStartedRun(db.prisma, startedRun(shape, 2))).runId;
    await db.prisma.flowRun.update({ where: { id: cancelled }, data: { cancel_requested_at: now } });
    const step = async (item: StepTransition) =>
      stepTransitionResults([item], await send(stepTransitionsStatement([item], shape)));
    const results = [await step(transition(runId, 1))];
    const rowOf = (n: number) => results[n]![0]!.row!.id;
    results.push(await step(transition(runId, 2, outcomeOf(rowOf(0), 1, { kind: 'completed', output: tricky }))));
    const retryAt = new Date(now.getTime() + 5_000);
    results.push(await step(transition(runId, 3, outcomeOf(rowOf(1), 2, { kind: 'failed', error: tricky, retryAt }))));
    // Refused: the cancellation is not known to this replay; then let through once it is.
    results.push(await step(transition(cancelled, 1)));
    results.push(await step({ ...transition(cancelled, 1), cancellationKnown: true }));
    // A stuck episode the finish closes, and the wake it acknowledges.
    await db.prisma.flowEvent.create({ data: { run_id: runId, type: 'run.stuck', data: { reason: 'test' } } });
    const job = await db.prisma.job.findFirstOrThrow({ where: { run_id: runId, locked_by: worker } });
    const finish = {
      runId,
      status: 'Failed' as const,
      error: tricky,
      data: { why: tricky },
      now,
      outcome: outcomeOf(rowOf(2), 3, { kind: 'errored', error: tricky }),
      ack: { id: job.id, workerId: worker },
    };
    const finished = finishTopRunResults(await send(finishTopRunsStatement([finish], shape)));
    return { results, finished, rows: await written([runId, cancelled]) };
  };

  const starts = async (shape: InputShape) => {
    const leased = startedRun(shape, 3);
    const pending = { ...startedRun(shape, 4, false), businessKey: null };
    const inserted = [
      ...insertedStartResults([leased], await send(insertStartedRunsStatement([leased], shape))),
      ...insertedStartResults([pending], await send(insertStartedRunsStatement([pending], shape))),
    ];
    const fused = {
      id: randomUUID(),
      run: startedRun(shape, 5),
      step: transition('', 1).step,
      started: { type: 'action.started', sequence: 1, data: { note: tricky } },
      workerId: worker,
      claimedAt: now,
    };
    inserted.push(...startedWithStepResults([fused], await send(insertStartedRunsWithStepStatement([fused], shape))));
    return { inserted, rows: await written(inserted.map((s) => s.runId)) };
  };

  it('step transitions and a finish: the same rows, history and results', async () => {
    const batch = await transitionsAndFinish('arrays');
    const lone = await transitionsAndFinish('scalars');
    // Not two empty answers: the batch's shape did the work the comparison stands on.
    expect(batch.results.map(([r]) => [r!.runOpen, r!.recorded, r!.row?.sequence ?? null])).toEqual([
      [true, false, 1],
      [true, true, 2],
      [true, true, 3],
      [false, false, null],
      [true, false, 1],
    ]);
    expect(batch.finished).toEqual(['Failed']);
    expect(batch.rows.events.map((e) => e.type)).toContain('run.unstuck');
    expect(normalized(lone, 'scalars')).toEqual(normalized(batch, 'arrays'));
  });

  it('starts, leased and not, and a start with its first step: the same rows, history and results', async () => {
    const batch = await starts('arrays');
    const lone = await starts('scalars');
    expect(batch.rows.runs.map((r) => r?.status)).toEqual(['Running', 'Pending', 'Running']);
    expect(batch.rows.steps).toHaveLength(1);
    expect(normalized(lone, 'scalars')).toEqual(normalized(batch, 'arrays'));
  });

  it('a lone item goes as scalars under a text of its own, several as arrays', () => {
    const one = stepTransitionsStatement([transition(randomUUID(), 1)]);
    const two = stepTransitionsStatement([transition(randomUUID(), 1), transition(randomUUID(), 1)]);
    expect(one.text).not.toBe(two.text);
    expect(one.text).toBe(stepTransitionsStatement([transition(randomUUID(), 1)], 'scalars').text);
    expect(one.values.filter(Array.isArray)).toHaveLength(2);
    expect(two.values.every(Array.isArray)).toBe(true);
  });
});
