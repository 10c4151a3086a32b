import type { DbJob } from './claim-jobs.ts';
import type { NewFlowRun } from './insert-flow-run.ts';
import type { LoadedRun } from './load-run-for-replay.ts';
import type { DbFlowRun } from './find-run.ts';
import type { DbActionRun } from './list-action-runs.ts';
import type { RawDb } from '../db/raw-db.ts';

/** A top-level run (no parent), as {@link NewFlowRun} describes its row. */
export interface StartedRun extends Omit<NewFlowRun, 'parent'> {
  /**
   * Lease the first wake to this worker, which runs the run at once (ADR 0029), and write the run
   * already marked active, as the replay's load would (ADR 0041); null: Pending, for any worker's poll.
   */
  lease: { workerId: string; leaseSeconds: number } | null;
}

/** A run a start wrote active and hands to its own pool: what that pool's replay starts from instead of a load. */
export interface HandedOverRun extends LoadedRun {
  /** The first step, written with the run already claimed by this worker (ADR 0048); null when the start wrote the run alone. */
  firstStep: DbActionRun | null;
}

/** What a start wrote: the run, and with a lease its first wake and the run as the replay's load would return it. */
export interface InsertedStart {
  runId: string;
  job: DbJob | null;
  /** With a lease, unless its run timeout is already due: the run row, written already active (Running, started, version 1). */
  loaded: HandedOverRun | null;
}

/**
 * A new run with its `run.started` history row, its first wake and, with a run timeout, the
 * backstop's wake, in ONE statement: a start is a single autocommitted write, all of it or none.
 * With a lease the wake is leased to `lease.workerId`, which runs the run at once (ADR 0029), and
 * the run is written as that worker's load would leave it (ADR 0041): Running, `started_at` now,
 * version 1, `run.running` after `run.started`. A run just written is open, on time (one whose run
 * timeout is due at once is written Pending: the load times it out), of a flow the
 * starting worker has and of no other replay, so the load would mark it active for certain: the
 * worker skips that transaction and replays from the row returned here.
 */
export async function insertStartedRun(db: RawDb, r: StartedRun): Promise<InsertedStart> {
  const { active, lockedBy, lockedUntil } = startedLease(r);
  const rows = await db.$queryRaw<(DbFlowRun & { job_id: bigint | null })[]>`
    with run as (
      insert into "sagaflow"."flow_runs"
        (flow_name, flow_version, input, business_key, tags, expires_at, run_timeout_at, created_at, updated_at,
         status, started_at, version)
      values (${r.flowName}, ${r.flowVersion}::int, ${JSON.stringify(r.input)}::jsonb, ${r.businessKey}::text,
              array(select jsonb_array_elements_text(${JSON.stringify(r.tags)}::jsonb)),
              ${r.expiresAt}::timestamptz, ${r.runTimeoutAt}::timestamptz, ${r.now}::timestamptz, ${r.now}::timestamptz,
              case when ${active}::boolean then 'Running' else 'Pending' end,
              case when ${active}::boolean then ${r.now}::timestamptz end,
              case when ${active}::boolean then 1 else 0 end)
      returning *
    ), event as (
      insert into "sagaflow"."flow_events" (run_id, type, data)
      select run.id, e.type, e.data
        from run,
             (values (1, 'run.started', jsonb_build_object('flow', ${r.flowName}::text, 'version', ${r.flowVersion}::int)),
                     (2, 'run.running', '{}'::jsonb)) e(ord, type, data)
       where e.ord = 1 or ${active}::boolean
       order by e.ord
    ), wakes as (
      insert into "sagaflow"."jobs" (kind, run_id, available_at, locked_by, locked_until, deliveries)
      select 'wake-run', id, ${r.now}::timestamptz, ${lockedBy}::text, ${lockedUntil}::timestamptz,
             ${lockedBy === null ? 0 : 1}::int
        from run
      union all
      select 'wake-run', id, ${r.runTimeoutAt}::timestamptz, null, null, 0
        from run where ${r.runTimeoutAt}::timestamptz is not null
      returning id, locked_by)
    select run.*, w.id as job_id from run left join wakes w on w.locked_by is not null`;
  const row = rows[0];
  if (!row) throw new Error('the start wrote no run');
  return insertedStart(row, active);
}

/** How a start's first wake is leased, and whether its run is written already active. */
export function startedLease(r: StartedRun): { active: boolean; lockedBy: string | null; lockedUntil: Date | null } {
  return {
    // The load marks active only a run on time: a run timeout already due (under a millisecond, so the
    // same instant as `now`) leaves the run Pending for the replay's load to time it out, as any other.
    active: r.lease !== null && (r.runTimeoutAt === null || r.runTimeoutAt.getTime() > r.now.getTime()),
    lockedBy: r.lease?.workerId ?? null,
    lockedUntil: r.lease ? new Date(r.now.getTime() + r.lease.leaseSeconds * 1000) : null,
  };
}

/** A start's result from the row its statement returned: the run, with the id of its leased wake if any. */
export function insertedStart(
  row: DbFlowRun & { job_id: bigint | null },
  active: boolean,
  firstStep: DbActionRun | null = null,
): InsertedStart {
  const { job_id: jobId, ...run } = row;
  const job = jobId === null ? null : { id: jobId, kind: 'wake-run', run_id: run.id, row_id: null, deliveries: 1 };
  return { runId: run.id, job, loaded: job && active ? { run, activeVersion: run.version, firstStep } : null };
}
