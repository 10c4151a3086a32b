import type { RawResult, RawStatement } from '../db/raw-db.ts';
import { inputShapeFor, inputValues, setBasedTexts, type InputColumn, type InputShape } from './batched-statement.ts';
import type { DbFlowRun } from './find-run.ts';
import { insertedStart, startedLease, type InsertedStart, type StartedRun } from './insert-started-run.ts';
import { claimedStepRow, type ClaimedStepReadBack, type NewStep } from './insert-step.ts';
import { startWakes } from './start-wakes.ts';
import type { StepEvent } from './step-event.ts';

/**
 * A start handed to its own pool whose replay's first write is a new action step (ADR 0048): the
 * run, with the id the replay already works under, and that step, claimed by `workerId` at `claimedAt`.
 */
export interface StartWithFirstStep {
  id: string;
  /** Always with a lease, and on time: the run is written active (ADR 0041). */
  run: StartedRun;
  step: NewStep;
  /** The step's `action.started` event (its attempt is taken from the row). */
  started: StepEvent;
  workerId: string;
  claimedAt: Date;
}

const lease = (item: StartWithFirstStep) => startedLease(item.run);

const columns: InputColumn<StartWithFirstStep>[] = [
  { name: 'id', type: 'uuid', of: (i) => i.id },
  { name: 'flow_name', type: 'text', of: (i) => i.run.flowName },
  { name: 'flow_version', type: 'int', of: (i) => i.run.flowVersion },
  { name: 'input', type: 'text', of: (i) => JSON.stringify(i.run.input) },
  { name: 'business_key', type: 'text', of: (i) => i.run.businessKey },
  // A column of text[] would unnest element by element: the tags travel as one JSON array per run.
  { name: 'tags', type: 'text', of: (i) => JSON.stringify(i.run.tags) },
  { name: 'expires_at', type: 'timestamptz', of: (i) => i.run.expiresAt },
  { name: 'run_timeout_at', type: 'timestamptz', of: (i) => i.run.runTimeoutAt },
  { name: 'now', type: 'timestamptz', of: (i) => i.run.now },
  { name: 'locked_by', type: 'text', of: (i) => lease(i).lockedBy },
  { name: 'locked_until', type: 'timestamptz', of: (i) => lease(i).lockedUntil },
  { name: 'sequence', type: 'int', of: (i) => i.step.sequence },
  { name: 'kind', type: 'text', of: (i) => i.step.kind },
  { name: 'name', type: 'text', of: (i) => i.step.name },
  { name: 'step_input', type: 'text', of: (i) => JSON.stringify(i.step.input) },
  { name: 'max_attempts', type: 'int', of: (i) => i.step.maxAttempts ?? 1 },
  { name: 'parallel_block', type: 'int', of: (i) => i.step.parallelBlock ?? null },
  { name: 'reclaim', type: 'int', of: (i) => i.step.reclaimAfterSeconds ?? null },
  { name: 'step_expires_at', type: 'timestamptz', of: (i) => i.step.expiresAt ?? null },
  { name: 'worker_id', type: 'text', of: (i) => i.workerId },
  { name: 'claimed_at', type: 'timestamptz', of: (i) => i.claimedAt },
  { name: 'started_type', type: 'text', of: (i) => i.started.type },
  { name: 'started_sequence', type: 'int', of: (i) => i.started.sequence },
  { name: 'started_data', type: 'text', of: (i) => JSON.stringify(i.started.data) },
];

/**
 * Starts and their first steps in ONE autocommitted statement (ADR 0048), set-based like the starts'
 * statement (ADR 0047), so its text never changes with their number and is prepared once per
 * connection. For each start it writes exactly what the starts' statement writes for a start leased
 * to its own worker (the run active, `run.started` then `run.running`, the wake leased to the worker,
 * the run-timeout backstop), under the id the replay drew, and exactly what a new step's transition
 * writes for the first step (ADR 0042: the row inserted already claimed, Running at attempt 1, its
 * reclaim deadline from its window, then `action.started`): a run that did not exist has no other
 * replay, no cancellation and no outcome to record, so that transition's gates hold for certain and
 * the step is inserted only where its run was. Each run's events go in one insert ordered by the
 * starts' order then `run.started`, `run.running`, `action.started`, so their ids keep today's order.
 * One statement: a duplicate business key anywhere fails all of it, and nothing is written.
 */
const texts = setBasedTexts(
  columns,
  (input) => `/* sagaflow: start with first step */
    with input as (
      ${input}
    ), run as (
      insert into "sagaflow"."flow_runs"
        (id, flow_name, flow_version, input, business_key, tags, expires_at, run_timeout_at, created_at, updated_at,
         status, started_at, version)
      select i.id, i.flow_name, i.flow_version, i.input::jsonb, i.business_key,
             array(select jsonb_array_elements_text(i.tags::jsonb)), i.expires_at, i.run_timeout_at, i.now, i.now,
             'Running', i.now, 1
        from input i
       order by i.k
      returning id, input
    ), claimed as (
      insert into "sagaflow"."action_runs"
        (run_id, sequence, kind, name, input, status, attempts, max_attempts, parallel_block,
         reclaim_stale_after_seconds, expires_at, claimed_by, started_at, updated_at, reclaim_stale_at)
      select i.id, i.sequence, i.kind, i.name, i.step_input::jsonb, 'Running', 1, i.max_attempts, i.parallel_block,
             i.reclaim, i.step_expires_at, i.worker_id, i.claimed_at, i.claimed_at,
             i.claimed_at + make_interval(secs => i.reclaim)
        from run r join input i on i.id = r.id
       order by i.k
      returning id, run_id, attempts, available_at, created_at
    ), event as (
      insert into "sagaflow"."flow_events" (run_id, type, sequence, row_id, data)
      select e.run_id, e.type, e.sequence, e.row_id, e.data from (
        select i.k, 1 as ord, r.id as run_id, 'run.started' as type, null::int as sequence, null::uuid as row_id,
               jsonb_build_object('flow', i.flow_name, 'version', i.flow_version) as data
          from run r join input i on i.id = r.id
        union all
        select i.k, 2, r.id, 'run.running', null, null, '{}'::jsonb
          from run r join input i on i.id = r.id
        union all
        select i.k, 3, c.run_id, i.started_type, i.started_sequence, c.id,
               i.started_data::jsonb || jsonb_build_object('attempt', c.attempts)
          from claimed c join input i on i.id = c.run_id
      ) e order by e.k, e.ord
    ), ${startWakes({ from: 'input', alias: 'i' }, ' 1')}
    select i.k, c.id, c.available_at, c.created_at, r.input as run_input, w.id as job_id
      from input i join run r on r.id = i.id join claimed c on c.run_id = r.id
      left join wakes w on w.run_id = r.id and w.locked_by is not null
     order by i.k`,
);

/**
 * The statement for `items`: one text per `shape` (a lone item's columns as scalars unless told
 * otherwise, ADR 0053), its values the items' columns.
 */
export function insertStartedRunsWithStepStatement(
  items: readonly StartWithFirstStep[],
  shape: InputShape = inputShapeFor(items),
): RawStatement {
  return { text: texts[shape], values: inputValues(columns, items, shape) };
}

/**
 * What each of `items` wrote, in their order, from the statement's rows (one per item, ordered by `k`):
 * the start's result, with its run as the load would return it and its first step's row.
 */
export function startedWithStepResults(items: readonly StartWithFirstStep[], result: RawResult): InsertedStart[] {
  const rows = result.rows as (ClaimedStepReadBack & { run_input: DbFlowRun['input']; job_id: bigint | null })[];
  if (rows.length !== items.length) throw new Error(`the starts wrote ${rows.length} runs for ${items.length}`);
  return rows.map((r, n) => {
    const item = items[n]!;
    // The run is the row this statement wrote; only its input is read back, as jsonb keeps it.
    const run = { ...startedRunRow(item.id, item.run), input: r.run_input };
    const firstStep = claimedStepRow(
      item.step,
      { runId: item.id, workerId: item.workerId, claimedAt: item.claimedAt },
      r,
    );
    return insertedStart({ ...run, job_id: r.job_id }, true, firstStep);
  });
}

/**
 * The row a start leased to its own worker and on time writes (ADR 0041), under `id`: what the
 * replay of a run not yet written works from. Every column is the start's value or the column's
 * constant default; `input` is as the flow was given it (jsonb may order its keys differently).
 */
export function startedRunRow(id: string, r: StartedRun): DbFlowRun {
  return {
    id,
    flow_name: r.flowName,
    flow_version: r.flowVersion,
    business_key: r.businessKey,
    status: 'Running',
    stuck_reason: null,
    waiting_for: null,
    input: r.input,
    output: null,
    error: null,
    tags: [...r.tags],
    parent_run_id: null,
    parent_sequence: null,
    expires_at: r.expiresAt,
    run_timeout_at: r.runTimeoutAt,
    expired_at: null,
    expiry_attempts: 0,
    expiry_retry_at: null,
    cancel_requested_at: null,
    cancel_reason: null,
    cancel_deadline_at: null,
    parent_cancel_policy: null,
    wake_at: null,
    repair_count: 0,
    history_epoch: 0,
    version: 1,
    created_at: r.now,
    updated_at: r.now,
    started_at: r.now,
    finished_at: null,
  };
}
