import type { RawResult, RawStatement } from '../db/raw-db.ts';
import { claimedStepRow, type ClaimedStepReadBack, type NewStep } from './insert-step.ts';
import type { DbActionRun } from './list-action-runs.ts';
import type { StepEvent } from './step-event.ts';
import type { StepOutcome } from './record-step-outcome.ts';
import type { StepTable } from './step-table.ts';
import {
  inputShapeFor,
  inputValues,
  setBasedOutcomeTexts,
  outcomeTablesFor,
  outcomeColumns,
  outcomeEventRows,
  type InputColumn,
  type InputShape,
  arrayParam,
} from './batched-statement.ts';
import { openRunByKeyText } from './keyed-status.ts';

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

/** One run's step transition, one item of {@link stepTransitionsStatement}. */
export interface StepTransition {
  step: NewStep;
  workerId: string;
  now: Date;
  /** False when the replay has not seen a cancellation: the gate refuses a run that has one. */
  cancellationKnown: boolean;
  /** The `action.started` event of the new step (its attempt is taken from the row). */
  started: StepEvent;
  outcome?: TransitionOutcome;
  /** The run's history epoch the replay read its steps at (ADR 0085): the gate refuses another. */
  epoch?: number | null;
}

const columns: InputColumn<StepTransition>[] = [
  { name: 'run_id', type: 'uuid', of: (i) => i.step.runId },
  { name: 'sequence', type: 'int', of: (i) => i.step.sequence },
  { name: 'kind', type: 'text', of: (i) => i.step.kind },
  { name: 'name', type: 'text', of: (i) => i.step.name },
  { name: 'input', type: 'text', of: (i) => JSON.stringify(i.step.input) },
  { name: 'max_attempts', type: 'int', of: (i) => i.step.maxAttempts ?? 1 },
  { name: 'parallel_block', type: 'int', of: (i) => i.step.parallelBlock ?? null },
  { name: 'reclaim', type: 'int', of: (i) => i.step.reclaimAfterSeconds ?? null },
  { name: 'expires_at', type: 'timestamptz', of: (i) => i.step.expiresAt ?? null },
  { name: 'worker_id', type: 'text', of: (i) => i.workerId },
  { name: 'now', type: 'timestamptz', of: (i) => i.now },
  { name: 'started_type', type: 'text', of: (i) => i.started.type },
  { name: 'started_sequence', type: 'int', of: (i) => i.started.sequence },
  { name: 'started_data', type: 'text', of: (i) => JSON.stringify(i.started.data) },
  ...outcomeColumns<StepTransition>((i) => i.outcome),
  // Last, so the columns before it keep their places (ADR 0085).
  { name: 'epoch', type: 'int', of: (i) => i.epoch ?? null },
];

/**
 * Several runs' step transitions in ONE autocommitted statement (ADR 0045): for each run exactly what
 * one transition's statement did (ADR 0042), set-based over arrays, so its text never changes and is
 * prepared once per connection whatever the number of runs. Per run, each write is gated on the ones
 * before it: the run's row locked FOR NO KEY UPDATE where it is open (and its cancellation, if any,
 * known), re-checked on the newest version after a wait under READ COMMITTED (a terminate that commits
 * first is seen; the lock is held to the commit, so a finisher's FOR UPDATE waits for it); the
 * previous step's outcome under recordStepOutcome's fence ({@link fencedOutcomes}); the new step's row
 * inserted already claimed (Running, attempt 1, reclaim deadline from its window, as an insert then a
 * claim inside one unseen transaction would leave it) only where the run's gate held and its outcome,
 * if any, was recorded, a row another replay inserted first left alone (on conflict do nothing); the
 * events, per run the outcome's then `action.started`, in one ordered insert. Run rows are locked in
 * id order, so two such statements never wait on each other in a cycle. Runs must be distinct (one
 * transition per run). A run whose steps a repair rewrote since the replay read them (its history
 * epoch moved on, ADR 0085) is refused as a closed one is. The leading comment names it where only the text's head is shown
 * (pg_stat_activity keeps 1 kB).
 */
const texts = setBasedOutcomeTexts(
  columns,
  (input, outcomes) => `/* sagaflow: step transitions */
    with input as (
      ${input}
    ), run as (
      select r.id from "sagaflow"."flow_runs" r
       where r.id = any(${arrayParam(1, 'uuid')}) and ${openRunByKeyText('r.status')}
         and (r.cancel_requested_at is null or r.id = any(${arrayParam(columns.length + 1, 'uuid')}))
         and r.history_epoch = coalesce((select i.epoch from input i where i.run_id = r.id), r.history_epoch)
       order by r.id
         for no key update
    )${outcomes}, claimed as (
      insert into "sagaflow"."action_runs"
        (run_id, sequence, kind, name, input, status, attempts, max_attempts, parallel_block,
         reclaim_stale_after_seconds, expires_at, claimed_by, started_at, updated_at, reclaim_stale_at)
      select i.run_id, i.sequence, i.kind, i.name, i.input::jsonb, 'Running', 1, i.max_attempts, i.parallel_block,
             i.reclaim, i.expires_at, i.worker_id, i.now, i.now, i.now + make_interval(secs => i.reclaim)
        from input i
       where i.run_id in (select id from run)
         and (i.prev_id is null or i.prev_id in (select id from upd))
       order by i.k
      on conflict (run_id, sequence) do nothing
      returning id, run_id, attempts, available_at, created_at
    ), events as (
      insert into "sagaflow"."flow_events" (run_id, type, sequence, row_id, data)
      select e.run_id, e.type, e.sequence, e.row_id, e.data from (${outcomeEventRows(1)}
        union all
        select i.k, 2, c.run_id, i.started_type, i.started_sequence, c.id,
               i.started_data::jsonb || jsonb_build_object('attempt', c.attempts)
          from claimed c join input i on i.run_id = c.run_id
      ) e order by e.k, e.ord
    )
    select i.k, exists (select 1 from run where run.id = i.run_id) as run_open,
           exists (select 1 from upd where upd.run_id = i.run_id) as recorded,
           c.id, c.available_at, c.created_at
      from input i left join claimed c on c.run_id = i.run_id
     order by i.k`,
);

/**
 * The statement for `items` (distinct runs): one text per `shape` (a lone item's columns as scalars
 * unless told otherwise, ADR 0053), its values the items' columns.
 */
export function stepTransitionsStatement(
  items: readonly StepTransition[],
  shape: InputShape = inputShapeFor(items),
): RawStatement {
  const cancellationKnown = items.filter((i) => i.cancellationKnown).map((i) => i.step.runId);
  return {
    text: texts[outcomeTablesFor(items.map((i) => i.outcome))][shape],
    values: [...inputValues(columns, items, shape), cancellationKnown],
  };
}

/**
 * Each item's result, in the items' order, from the statement's rows (one per item, ordered by `k`):
 * the new step's row built from the item and the columns read back ({@link claimedStepRow}).
 */
export function stepTransitionResults(items: readonly StepTransition[], result: RawResult): TransitionResult[] {
  const rows = result.rows as ({ k: number; run_open: boolean; recorded: boolean } & Partial<ClaimedStepReadBack>)[];
  if (rows.length !== items.length) throw new Error(`the transitions answered ${rows.length} rows for ${items.length}`);
  return rows.map((r, n) => {
    const item = items[n]!;
    const row = r.id
      ? claimedStepRow(
          item.step,
          { runId: item.step.runId, workerId: item.workerId, claimedAt: item.now },
          r as ClaimedStepReadBack,
        )
      : null;
    return { runOpen: r.run_open, recorded: r.recorded, row };
  });
}
