import type { RawResult, RawStatement } from '../db/raw-db.ts';
import type { NewStep } from './insert-step.ts';
import type { DbActionRun } from './list-action-runs.ts';
import type { StepEvent } from './step-event.ts';
import type { TransitionOutcome, TransitionResult } from './step-transition.ts';
import { openRunStatuses } from './types.ts';

/** One run's step transition, as {@link stepTransitions} takes it: what stepTransition takes, for one run. */
export interface StepTransition {
  step: NewStep;
  workerId: string;
  now: Date;
  /** False when the replay has not seen a cancellation: the gate refuses a run that has one. */
  cancellationKnown: boolean;
  /** The `action.started` event of the new step (its attempt is taken from the row). */
  started: StepEvent;
  outcome?: TransitionOutcome;
}

const openStatuses = openRunStatuses.map((s) => `'${s.replaceAll("'", "''")}'`).join(', ');

/**
 * Several runs' step transitions in ONE autocommitted statement (ADR 0045): for each run exactly what
 * stepTransition's statement does for one (ADR 0042), set-based over arrays, so its text never changes
 * and is prepared once per connection whatever the number of runs. Per run, each write is gated on
 * the ones before it: the run's row locked FOR NO KEY UPDATE where it is open (and its cancellation,
 * if any, known), re-checked on the newest version after a wait under READ COMMITTED; the previous
 * step's outcome under recordStepOutcome's fence (the row Running under our attempts, in this locked
 * run), in its own table; the new step's row inserted already claimed only where the run's gate held
 * and its outcome, if any, was recorded (on conflict do nothing); the events, per run the outcome's
 * then `action.started`, in one ordered insert. Run rows are locked in id order, so two such
 * statements never wait on each other in a cycle. Runs must be distinct (one transition per run).
 * The leading comment names it where only the text's head is shown (pg_stat_activity keeps 1 kB).
 */
const text = `/* sagaflow: step transitions */
    with input as (
      select * from unnest($1::int[], $2::uuid[], $3::int[], $4::text[], $5::text[], $6::text[], $7::int[],
                           $8::int[], $9::int[], $10::timestamptz[], $11::text[], $12::timestamptz[],
                           $13::text[], $14::uuid[], $15::int[], $16::text[], $17::text[], $18::text[],
                           $19::timestamptz[], $20::text[], $21::int[], $22::text[], $23::text[], $24::int[],
                           $25::text[])
        as i(k, run_id, sequence, kind, name, input, max_attempts,
             parallel_block, reclaim, expires_at, worker_id, now,
             prev_table, prev_id, prev_attempts, prev_status, prev_output, prev_error,
             prev_retry_at, done_type, done_sequence, done_data, started_type, started_sequence,
             started_data)
    ), run as (
      select r.id from "sagaflow"."flow_runs" r
       where r.id = any($2::uuid[]) and r.status in (${openStatuses})
         and (r.cancel_requested_at is null or r.id = any($26::uuid[]))
       order by r.id
         for no key update
    ), upd_a as (
      update "sagaflow"."action_runs" s
         set status = i.prev_status, output = i.prev_output::jsonb, error = i.prev_error::jsonb,
             available_at = coalesce(i.prev_retry_at, s.available_at), reclaim_stale_at = null,
             updated_at = i.now, finished_at = case when i.prev_status = 'Failed' then null else i.now end
        from input i
       where i.prev_table = 'action_runs' and s.id = i.prev_id and s.run_id = i.run_id
         and s.run_id in (select id from run) and s.attempts = i.prev_attempts and s.status = 'Running'
      returning s.id, s.run_id, s.attempts
    ), upd_c as (
      update "sagaflow"."compensation_runs" s
         set status = i.prev_status, output = i.prev_output::jsonb, error = i.prev_error::jsonb,
             available_at = coalesce(i.prev_retry_at, s.available_at), reclaim_stale_at = null,
             updated_at = i.now, finished_at = case when i.prev_status = 'Failed' then null else i.now end
        from input i
       where i.prev_table = 'compensation_runs' and s.id = i.prev_id and s.run_id = i.run_id
         and s.run_id in (select id from run) and s.attempts = i.prev_attempts and s.status = 'Running'
      returning s.id, s.run_id, s.attempts
    ), upd as (
      select * from upd_a union all select * from upd_c
    ), claimed as (
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
      returning *
    ), events as (
      insert into "sagaflow"."flow_events" (run_id, type, sequence, row_id, data)
      select e.run_id, e.type, e.sequence, e.row_id, e.data from (
        select i.k, 1 as ord, u.run_id, i.done_type as type, i.done_sequence as sequence, u.id as row_id,
               i.done_data::jsonb || jsonb_build_object('attempt', u.attempts) as data
          from upd u join input i on i.prev_id = u.id
        union all
        select i.k, 2, c.run_id, i.started_type, i.started_sequence, c.id,
               i.started_data::jsonb || jsonb_build_object('attempt', c.attempts)
          from claimed c join input i on i.run_id = c.run_id
      ) e order by e.k, e.ord
    )
    select i.k, exists (select 1 from run where run.id = i.run_id) as run_open,
           exists (select 1 from upd where upd.run_id = i.run_id) as recorded, c.*
      from input i left join claimed c on c.run_id = i.run_id
     order by i.k`;

/** The statement for `items` (distinct runs): its text is always the same, its values are the items' columns. */
export function stepTransitionsStatement(items: readonly StepTransition[]): RawStatement {
  const column = <T>(of: (item: StepTransition) => T): T[] => items.map(of);
  const prev = (item: StepTransition) => item.outcome;
  const outcome = (item: StepTransition) => item.outcome?.outcome;
  const status = (kind: 'completed' | 'failed' | 'errored' | undefined) =>
    kind === undefined ? null : kind === 'completed' ? 'Completed' : kind === 'failed' ? 'Failed' : 'Errored';
  return {
    text,
    values: [
      items.map((_, k) => k),
      column((i) => i.step.runId),
      column((i) => i.step.sequence),
      column((i) => i.step.kind),
      column((i) => i.step.name),
      column((i) => JSON.stringify(i.step.input)),
      column((i) => i.step.maxAttempts ?? 1),
      column((i) => i.step.parallelBlock ?? null),
      column((i) => i.step.reclaimAfterSeconds ?? null),
      column((i) => i.step.expiresAt ?? null),
      column((i) => i.workerId),
      column((i) => i.now),
      column((i) => prev(i)?.table ?? null),
      column((i) => prev(i)?.id ?? null),
      column((i) => prev(i)?.attempts ?? null),
      column((i) => status(outcome(i)?.kind)),
      column((i) => {
        const o = outcome(i);
        return o?.kind === 'completed' ? JSON.stringify(o.output) : null;
      }),
      column((i) => {
        const o = outcome(i);
        return o && o.kind !== 'completed' ? JSON.stringify(o.error) : null;
      }),
      column((i) => {
        const o = outcome(i);
        return o?.kind === 'failed' ? o.retryAt : null;
      }),
      column((i) => prev(i)?.event.type ?? null),
      column((i) => prev(i)?.event.sequence ?? null),
      column((i) => (prev(i) ? JSON.stringify(prev(i)!.event.data) : null)),
      column((i) => i.started.type),
      column((i) => i.started.sequence),
      column((i) => JSON.stringify(i.started.data)),
      items.filter((i) => i.cancellationKnown).map((i) => i.step.runId),
    ],
  };
}

/** Each item's result, in the items' order, from the statement's rows (one per item, ordered by `k`). */
export function stepTransitionResults(result: RawResult): TransitionResult[] {
  return (result.rows as (DbActionRun & { k: number; run_open: boolean; recorded: boolean })[]).map(
    ({ k: _k, run_open: runOpen, recorded, ...row }) => ({ runOpen, recorded, row: row.id ? row : null }),
  );
}
