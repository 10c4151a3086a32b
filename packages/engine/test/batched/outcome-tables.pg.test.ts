import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, SqlSession } from '../../src/db/database.ts';
import type { RawStatement } from '../../src/db/raw-db.ts';
import { finishTopRunResults, finishTopRunsStatement } from '../../src/store/finish-top-runs.ts';
import {
  stepTransitionResults,
  stepTransitionsStatement,
  type StepTransition,
  type TransitionOutcome,
} from '../../src/store/step-transitions.ts';
import { activeRun as writeActiveRun } from '../support/active-run.ts';
import { openTestDatabase } from '../support/test-database.ts';

/**
 * ADR 0062: an UPDATE arm locks its table, sets up its plan nodes and scans the table on each
 * execution, even when it matches nothing. The hot path's transitions and finishes carry action steps' outcomes only,
 * so their statements leave compensation_runs out; a statement carrying a compensation's outcome
 * still records it under the same fence. Read from pg_locks inside the statement's transaction on
 * the real server: what the statement locked is what it opened.
 */
const worker = 'outcome-tables-worker';

describe('a transition or finish carrying no compensation outcome does not open compensation_runs (PostgreSQL)', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  const transition = (runId: string, sequence: number, outcome?: TransitionOutcome): StepTransition => ({
    step: { runId, sequence, kind: 'action', name: `step-${sequence}`, input: { n: sequence } },
    workerId: worker,
    now: new Date(),
    cancellationKnown: false,
    started: { type: 'action.started', sequence, data: {} },
    ...(outcome ? { outcome } : {}),
  });

  /** A run written active with its step 1 claimed, and that step's completion as a transition carries it. */
  const runAtStepOne = async (flowName: string) => {
    const runId = await writeActiveRun(db, flowName, worker);
    await db.driver.statement(stepTransitionsStatement([transition(runId, 1)]));
    const row = await db.prisma.actionRun.findFirstOrThrow({ where: { run_id: runId, sequence: 1 } });
    const outcome: TransitionOutcome = {
      table: 'action_runs',
      id: row.id,
      attempts: 1,
      outcome: { kind: 'completed', output: { done: 1 } },
      event: { type: 'action.completed', sequence: 1, data: {} },
    };
    return { runId, outcome };
  };

  /** Sends `statement` in a transaction of its own; its result and the step tables it holds a lock on then. */
  const sendAndReadLocks = async (statement: RawStatement) =>
    db.driver.transaction(async (tx: SqlSession) => {
      const result = await tx.raw(statement);
      const locked = await tx.query<{ name: string }>(
        `select distinct t.relname as name
           from pg_locks l join pg_class c on c.oid = l.relation left join pg_index i on i.indexrelid = c.oid
           join pg_class t on t.oid = coalesce(i.indrelid, c.oid)
          where l.pid = pg_backend_pid() and l.locktype = 'relation'
            and t.oid in ('sagaflow.action_runs'::regclass, 'sagaflow.compensation_runs'::regclass)
          order by 1`,
      );
      return { result, locked: locked.map((l) => l.name) };
    });

  it("a step transition recording an action's outcome locks action_runs and not compensation_runs", async () => {
    const { runId, outcome } = await runAtStepOne('outcome-tables-transition');
    const items = [transition(runId, 2, outcome)];
    const { result, locked } = await sendAndReadLocks(stepTransitionsStatement(items));
    expect(stepTransitionResults(items, result).map((r) => [r.runOpen, r.recorded, r.row?.sequence])).toEqual([
      [true, true, 2],
    ]);
    expect(locked).toEqual(['action_runs']);
  });

  it("a finish recording an action's outcome, two runs as arrays, locks action_runs and not compensation_runs", async () => {
    const runs = [await runAtStepOne('outcome-tables-finish-a'), await runAtStepOne('outcome-tables-finish-b')];
    const { result, locked } = await sendAndReadLocks(
      finishTopRunsStatement(
        runs.map(({ runId, outcome }) => ({ runId, status: 'Completed', data: {}, now: new Date(), outcome })),
      ),
    );
    expect(finishTopRunResults(result)).toEqual(['Completed', 'Completed']);
    expect(locked).toEqual(['action_runs']);
  });

  it("a transition carrying a compensation's outcome beside an action's records both, under their fences", async () => {
    const forward = await runAtStepOne('outcome-tables-compensation-a');
    const undoing = await runAtStepOne('outcome-tables-compensation-b');
    const [compensation] = await db.driver.query<{ id: string }>(
      `insert into "sagaflow"."compensation_runs" (run_id, action_sequence, name, status, input, attempts, claimed_by)
       values ($1, 1, 'undo-step-1', 'Running', '{}', 1, $2) returning id`,
      [undoing.runId, worker],
    );
    const undone: TransitionOutcome = {
      table: 'compensation_runs',
      id: compensation!.id,
      attempts: 1,
      outcome: { kind: 'completed', output: { undone: 1 } },
      event: { type: 'compensation.completed', sequence: 1, data: {} },
    };
    const items = [transition(forward.runId, 2, forward.outcome), transition(undoing.runId, 2, undone)];
    const { result, locked } = await sendAndReadLocks(stepTransitionsStatement(items));
    expect(stepTransitionResults(items, result).map((r) => [r.runOpen, r.recorded, r.row?.sequence])).toEqual([
      [true, true, 2],
      [true, true, 2],
    ]);
    expect(locked).toEqual(['action_runs', 'compensation_runs']);
    const [row] = await db.driver.query<{ status: string; output: unknown }>(
      `select status, output from "sagaflow"."compensation_runs" where id = $1`,
      [compensation!.id],
    );
    expect(row).toEqual({ status: 'Completed', output: { undone: 1 } });
  });
});
