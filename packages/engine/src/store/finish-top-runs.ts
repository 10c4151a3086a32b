import type { Json } from '../definitions/define-action.ts';
import type { RawResult, RawStatement } from '../db/raw-db.ts';
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
import type { JobAck } from './delete-job.ts';
import type { FinalRunStatus } from './finish-run.ts';
import type { TransitionOutcome } from './step-transitions.ts';

/** One top-level run's finish, one item of {@link finishTopRunsStatement}. */
export interface TopRunFinish {
  runId: string;
  status: FinalRunStatus;
  output?: Json;
  error?: Json;
  /** The terminal event's data. */
  data: Record<string, Json>;
  now: Date;
  outcome?: TransitionOutcome;
  ack?: Pick<JobAck, 'id' | 'workerId'>;
  /** The run's history epoch the replay read its steps at (ADR 0085): the gate refuses another. */
  epoch?: number | null;
}

const columns: InputColumn<TopRunFinish>[] = [
  { name: 'run_id', type: 'uuid', of: (i) => i.runId },
  { name: 'status', type: 'text', of: (i) => i.status },
  { name: 'output', type: 'text', of: (i) => (i.output === undefined ? null : JSON.stringify(i.output)) },
  { name: 'error', type: 'text', of: (i) => (i.error === undefined ? null : JSON.stringify(i.error)) },
  { name: 'end_data', type: 'text', of: (i) => JSON.stringify(i.data) },
  { name: 'now', type: 'timestamptz', of: (i) => i.now },
  { name: 'ack_id', type: 'bigint', of: (i) => (i.ack ? i.ack.id.toString() : null) },
  { name: 'ack_worker', type: 'text', of: (i) => i.ack?.workerId ?? null },
  ...outcomeColumns<TopRunFinish>((i) => i.outcome),
  // Last, so the columns before it keep their places (ADR 0085).
  { name: 'epoch', type: 'int', of: (i) => i.epoch ?? null },
];

/**
 * Several top-level runs' finishes in ONE autocommitted statement (ADR 0045): for each run exactly
 * what one finish's statement did (ADR 0042), set-based over arrays, its text never changing. Per run:
 * the row locked FOR UPDATE where it is open, has no parent, has no open 'propagate' child (its end would
 * have to cancel it: the transaction does, ADR 0094), and is still the version the statement's snapshot
 * saw (same xmin: a park, a stuck mark, an expiry, or a child's start, which touches its parent's row,
 * committed while the statement waited closes the gate, because the last stuck event and the children are
 * read from that snapshot); the last step's outcome
 * under recordStepOutcome's fence ({@link fencedOutcomes}); finishRun's compare-and-swap with its SET
 * list (an expired run ends Expired); then, only where the run finished, the outcome's event, a stuck
 * episode's `run.unstuck`, the terminal event, in that order, and the job's acknowledgement. Run rows
 * are locked in id order. Runs must be distinct.
 */
const texts = setBasedOutcomeTexts(
  columns,
  (input, outcomes) => `/* sagaflow: top-level run finishes */
    with input as (
      ${input}
    ), seen as (
      select r.id, r.xmin::text as version from "sagaflow"."flow_runs" r where r.id = any(${arrayParam(1, 'uuid')})
    ), run as (
      select r.id from "sagaflow"."flow_runs" r
       where r.id = any(${arrayParam(1, 'uuid')}) and ${openRunByKeyText('r.status')} and r.parent_run_id is null
         and r.xmin::text = (select version from seen where seen.id = r.id)
         and r.history_epoch = coalesce((select i.epoch from input i where i.run_id = r.id), r.history_epoch)
         and not exists (select 1 from "sagaflow"."flow_runs" c
                          where c.parent_run_id = r.id and c.parent_cancel_policy = 'propagate'
                            and ${openRunByKeyText('c.status')})
       order by r.id
         for update
    )${outcomes}, fin as (
      update "sagaflow"."flow_runs" f
         set status = case when f.expired_at is not null and i.status not in ('Terminated', 'TimedOut')
                           then 'Expired' else i.status end,
             output = i.output::jsonb, error = i.error::jsonb, waiting_for = null, stuck_reason = null,
             finished_at = i.now, updated_at = i.now, version = f.version + 1
        from input i
       where f.id = i.run_id and f.id in (select id from run) and ${openRunByKeyText('f.status')}
         and (i.prev_id is null or i.prev_id in (select id from upd))
      returning f.id, f.status
    ), events as (
      insert into "sagaflow"."flow_events" (run_id, type, sequence, row_id, data)
      select e.run_id, e.type, e.sequence, e.row_id, e.data from (
        select o.* from (${outcomeEventRows(0)}) o where o.run_id in (select id from fin)
        union all
        select i.k, 1, f.id, 'run.unstuck', null, null,
               jsonb_build_object('reason', last.data->>'reason', 'by', 'run.' || lower(f.status))
          from fin f join input i on i.run_id = f.id
          cross join lateral (
            select s.type, s.data from "sagaflow"."flow_events" s
             where s.run_id = f.id and s.type in ('run.stuck', 'run.unstuck')
             order by s.id desc limit 1) last
         where last.type = 'run.stuck'
        union all
        select i.k, 2, f.id, 'run.' || lower(f.status), null, null, i.end_data::jsonb
          from fin f join input i on i.run_id = f.id
      ) e order by e.k, e.ord
    ), ack as (
      delete from "sagaflow"."jobs" j using input i
       where j.id = i.ack_id and j.locked_by = i.ack_worker and i.run_id in (select id from fin)
    )
    select i.k, f.status from input i left join fin f on f.id = i.run_id order by i.k`,
);

/**
 * The statement for `items` (distinct runs): one text per `shape` (a lone item's columns as scalars
 * unless told otherwise, ADR 0053), its values the items' columns.
 */
export function finishTopRunsStatement(
  items: readonly TopRunFinish[],
  shape: InputShape = inputShapeFor(items),
): RawStatement {
  return {
    text: texts[outcomeTablesFor(items.map((i) => i.outcome))][shape],
    values: inputValues(columns, items, shape),
  };
}

/** Each item's status written, or null where its statement wrote nothing, in the items' order. */
export function finishTopRunResults(result: RawResult): (FinalRunStatus | null)[] {
  return (result.rows as { status: FinalRunStatus | null }[]).map((r) => r.status);
}
