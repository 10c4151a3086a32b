import { Prisma } from '../generated/prisma/client.ts';
import type { RawDb } from '../db/raw-db.ts';
import type { NewStep } from './insert-step.ts';
import type { DbActionRun } from './list-action-runs.ts';
import { outcomeSet, type StepOutcome } from './record-step-outcome.ts';
import { stepEventRows, type StepEvent } from './step-event.ts';
import { openRunStatusesSql, tableSql, type StepTable } from './step-table.ts';

/** The previous step's outcome a transition records, under the fence of recordStepOutcome. */
export interface TransitionOutcome {
  table: StepTable;
  id: string;
  attempts: number;
  outcome: StepOutcome;
  event: StepEvent;
}

/** What one transition statement did; it wrote nothing unless `runOpen` and (with an outcome) `recorded`. */
export interface TransitionResult {
  /** The run was open (and its cancellation, if any, known) once its row was locked. */
  runOpen: boolean;
  /** The previous step's outcome was recorded (false when there was none to record). */
  recorded: boolean;
  /** The new step's row, inserted already claimed; null when nothing was inserted (another replay's row, or a closed gate). */
  row: DbActionRun | null;
}

/**
 * A step transition in ONE autocommitted statement (ADR 0042): what a claim's transaction does with
 * lockOpenRun, recordStepOutcome, insertStep and claimStep, for a step new to the run. The run's row
 * is locked FOR NO KEY UPDATE by a CTE, which under READ COMMITTED re-checks the open status and the
 * cancellation condition on the row's newest version after any wait (a terminate that commits first
 * is seen); the lock is held to the statement's commit, so a finisher's FOR UPDATE waits for it.
 * The outcome is written under exactly recordStepOutcome's fence (the row Running under our attempts,
 * in this open run). The new row is inserted already claimed (Running, attempt 1, reclaim deadline
 * from its window), as an insert then a claim inside one unseen transaction would leave it; a row
 * that another replay inserted first is left alone (on conflict do nothing). Each write is gated on
 * the ones before it, so the statement writes nothing unless the run gate held and the outcome, if
 * any, was recorded. Events are appended by one insert, in the order of the transitions.
 */
export async function stepTransition(
  db: RawDb,
  args: {
    step: NewStep;
    workerId: string;
    now: Date;
    /** False when the replay has not seen a cancellation: the gate refuses a run that has one. */
    cancellationKnown: boolean;
    /** The `action.started` event of the new step (its attempt is taken from the row). */
    started: StepEvent;
    outcome?: TransitionOutcome;
  },
): Promise<TransitionResult> {
  const { step, now, outcome } = args;
  const reclaim = step.reclaimAfterSeconds ?? null;
  const recorded = outcome ? fencedOutcomeCte(outcome, now) : Prisma.empty;
  const events = outcome
    ? Prisma.sql`select 1 as ord, o.* from (${stepEventRows(outcome.event, 'upd')}) o
        union all
        select 2 as ord, n.* from (${stepEventRows(args.started, 'claimed')}) n`
    : Prisma.sql`select 2 as ord, n.* from (${stepEventRows(args.started, 'claimed')}) n`;
  const rows = await db.$queryRaw<(DbActionRun & { run_open: boolean; recorded: boolean })[]>(Prisma.sql`
    with run as (
      select r.id from "sagaflow"."flow_runs" r
       where r.id = ${step.runId}::uuid and r.status in ${openRunStatusesSql}
         and (r.cancel_requested_at is null or ${args.cancellationKnown})
         for no key update
    )${recorded}, claimed as (
      insert into "sagaflow"."action_runs"
        (run_id, sequence, kind, name, input, status, attempts, max_attempts, parallel_block,
         reclaim_stale_after_seconds, expires_at, claimed_by, started_at, updated_at, reclaim_stale_at)
      select r.id, ${step.sequence}::int, ${step.kind}, ${step.name}, ${JSON.stringify(step.input)}::jsonb,
             'Running', 1, ${step.maxAttempts ?? 1}::int, ${step.parallelBlock ?? null}::int, ${reclaim}::int,
             ${step.expiresAt ?? null}::timestamptz, ${args.workerId}, ${now}::timestamptz, ${now}::timestamptz,
             ${now}::timestamptz + make_interval(secs => ${reclaim}::int)
        from run r
       ${outcome ? Prisma.sql`where exists (select 1 from upd)` : Prisma.empty}
      on conflict (run_id, sequence) do nothing
      returning *
    ), events as (
      insert into "sagaflow"."flow_events" (run_id, type, sequence, row_id, data)
      select e.run_id, e.type, e.sequence, e.row_id, e.data from (${events}) e order by e.ord
    )
    select exists (select 1 from run) as run_open,
           ${outcome ? Prisma.sql`exists (select 1 from upd)` : Prisma.sql`false`} as recorded, c.*
      from (select 1) one left join claimed c on true`);
  const { run_open: runOpen, recorded: wasRecorded, ...row } = rows[0]!;
  return { runOpen, recorded: wasRecorded, row: row.id ? row : null };
}

/**
 * The CTE `upd` of a fused statement: the outcome under recordStepOutcome's fence (the row Running
 * under our attempts, in the run the statement's `run` CTE locked open), returning id, run_id and
 * attempts for its event. Shared by the step transition and the finish (finish-top-run.ts).
 */
export function fencedOutcomeCte(outcome: TransitionOutcome, now: Date): Prisma.Sql {
  return Prisma.sql`, upd as (
      update ${tableSql(outcome.table)} s
         set ${outcomeSet(outcome.outcome, now)}
       where s.id = ${outcome.id}::uuid and s.run_id = (select id from run)
         and s.attempts = ${outcome.attempts}::int and s.status = 'Running'
      returning s.id, s.run_id, s.attempts)`;
}
