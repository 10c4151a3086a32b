import { Prisma } from '../generated/prisma/client.ts';
import type { DbActionRun } from './list-action-runs.ts';
import { outcomeSet, type StepOutcome } from './record-step-outcome.ts';
import type { StepEvent } from './step-event.ts';
import { tableSql, type StepTable } from './step-table.ts';

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
