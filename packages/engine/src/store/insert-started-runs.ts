import type { RawResult, RawStatement } from '../db/raw-db.ts';
import { inputShapeFor, inputValues, setBasedTexts, type InputColumn, type InputShape } from './batched-statement.ts';
import type { DbFlowRun } from './find-run.ts';
import { insertedStart, startedLease, type InsertedStart, type StartedRun } from './insert-started-run.ts';
import { startWakes } from './start-wakes.ts';

const columns: InputColumn<StartedRun>[] = [
  { name: 'flow_name', type: 'text', of: (r) => r.flowName },
  { name: 'flow_version', type: 'int', of: (r) => r.flowVersion },
  { name: 'input', type: 'text', of: (r) => JSON.stringify(r.input) },
  { name: 'business_key', type: 'text', of: (r) => r.businessKey },
  // A column of text[] would unnest element by element: the tags travel as one JSON array per run.
  { name: 'tags', type: 'text', of: (r) => JSON.stringify(r.tags) },
  { name: 'expires_at', type: 'timestamptz', of: (r) => r.expiresAt },
  { name: 'run_timeout_at', type: 'timestamptz', of: (r) => r.runTimeoutAt },
  { name: 'now', type: 'timestamptz', of: (r) => r.now },
  { name: 'active', type: 'boolean', of: (r) => startedLease(r).active },
  { name: 'locked_by', type: 'text', of: (r) => startedLease(r).lockedBy },
  { name: 'locked_until', type: 'timestamptz', of: (r) => startedLease(r).lockedUntil },
];

/** A first wake leased to the start's worker is delivered already (1); one left for any worker's poll is not (0). */
const firstDeliveries = '\n               case when f.locked_by is null then 0 else 1 end';

/**
 * Several starts in ONE autocommitted statement (ADR 0047): for each run exactly what a lone start's
 * statement writes ({@link insertStartedRun}), set-based over arrays (ADR 0045), so its text never
 * changes and is prepared once per connection. Each run's id is drawn by the server, as the column's
 * default would (`gen_random_uuid()`), in a materialized CTE evaluated once, so every write of the
 * run and the row returned for its item are joined by that id and `k`, never by the order RETURNING
 * happens to give. The rows, the events (per run `run.started`, then `run.running` if written
 * active) and the wakes (per run the first wake, then the run-timeout backstop) are inserted in the
 * items' order. One statement: a duplicate business key anywhere fails all of it, and nothing is written.
 */
const texts = setBasedTexts(
  columns,
  (input) => `/* sagaflow: starts */
    with input as (
      ${input}
    ), fresh as materialized (
      select gen_random_uuid() as id, i.* from input i
    ), run as (
      insert into "sagaflow"."flow_runs"
        (id, flow_name, flow_version, input, business_key, tags, expires_at, run_timeout_at, created_at, updated_at,
         status, started_at, version)
      select f.id, f.flow_name, f.flow_version, f.input::jsonb, f.business_key,
             array(select jsonb_array_elements_text(f.tags::jsonb)), f.expires_at, f.run_timeout_at, f.now, f.now,
             case when f.active then 'Running' else 'Pending' end,
             case when f.active then f.now end,
             case when f.active then 1 else 0 end
        from fresh f
       order by f.k
      returning *
    ), event as (
      insert into "sagaflow"."flow_events" (run_id, type, data)
      select r.id, e.type, e.data
        from run r join fresh f on f.id = r.id
       cross join lateral (values
               (1, 'run.started', jsonb_build_object('flow', f.flow_name, 'version', f.flow_version)),
               (2, 'run.running', '{}'::jsonb)) e(ord, type, data)
       where e.ord = 1 or f.active
       order by f.k, e.ord
    ), ${startWakes({ from: 'fresh', alias: 'f' }, firstDeliveries)}
    select f.k, r.*, w.id as job_id
      from fresh f join run r on r.id = f.id
      left join wakes w on w.run_id = r.id and w.locked_by is not null
     order by f.k`,
);

/**
 * The statement for `starts`: one text per `shape` (a lone start's columns as scalars unless told
 * otherwise, ADR 0053), its values the starts' columns.
 */
export function insertStartedRunsStatement(
  starts: readonly StartedRun[],
  shape: InputShape = inputShapeFor(starts),
): RawStatement {
  return { text: texts[shape], values: inputValues(columns, starts, shape) };
}

/** What each of `starts` wrote, in their order, from the statement's rows (one per start, ordered by `k`). */
export function insertedStartResults(starts: readonly StartedRun[], result: RawResult): InsertedStart[] {
  const rows = result.rows as (DbFlowRun & { k: bigint; job_id: bigint | null })[];
  if (rows.length !== starts.length) throw new Error(`the starts wrote ${rows.length} runs for ${starts.length}`);
  return rows.map(({ k: _k, ...row }, n) => insertedStart(row, startedLease(starts[n]!).active));
}
