import type { DbJob } from './claim-jobs.ts';
import type { NewFlowRun } from './insert-flow-run.ts';
import type { Db } from './types.ts';

/** A top-level run (no parent), as {@link NewFlowRun} describes its row. */
export interface StartedRun extends Omit<NewFlowRun, 'parent'> {
  /** Lease the first wake to this worker, which runs the run at once (ADR 0029); null: any worker's poll. */
  lease: { workerId: string; leaseSeconds: number } | null;
}

/**
 * A new run with its `run.started` history row, its first wake and, with a run timeout, the
 * backstop's wake, in ONE statement: a start is a single autocommitted write, all of it or none.
 * Returns the run's id and the first wake when it was leased to `lease.workerId`.
 */
export async function insertStartedRun(db: Db, r: StartedRun): Promise<{ runId: string; job: DbJob | null }> {
  const lockedBy = r.lease?.workerId ?? null;
  const lockedUntil = r.lease ? new Date(r.now.getTime() + r.lease.leaseSeconds * 1000) : null;
  const rows = await db.$queryRaw<{ run_id: string; job_id: bigint | null }[]>`
    with run as (
      insert into "sagaflow"."flow_runs"
        (flow_name, flow_version, input, business_key, tags, expires_at, run_timeout_at, created_at, updated_at)
      values (${r.flowName}, ${r.flowVersion}::int, ${JSON.stringify(r.input)}::jsonb, ${r.businessKey}::text,
              array(select jsonb_array_elements_text(${JSON.stringify(r.tags)}::jsonb)),
              ${r.expiresAt}::timestamptz, ${r.runTimeoutAt}::timestamptz, ${r.now}::timestamptz, ${r.now}::timestamptz)
      returning id
    ), event as (
      insert into "sagaflow"."flow_events" (run_id, type, data)
      select id, 'run.started', jsonb_build_object('flow', ${r.flowName}::text, 'version', ${r.flowVersion}::int)
        from run
    ), wakes as (
      insert into "sagaflow"."jobs" (kind, run_id, available_at, locked_by, locked_until, deliveries)
      select 'wake-run', id, ${r.now}::timestamptz, ${lockedBy}::text, ${lockedUntil}::timestamptz,
             ${lockedBy === null ? 0 : 1}::int
        from run
      union all
      select 'wake-run', id, ${r.runTimeoutAt}::timestamptz, null, null, 0
        from run where ${r.runTimeoutAt}::timestamptz is not null
      returning id, locked_by)
    select run.id::text as run_id, w.id as job_id from run left join wakes w on w.locked_by is not null`;
  const row = rows[0];
  if (!row) throw new Error('the start wrote no run');
  const job =
    row.job_id === null ? null : { id: row.job_id, kind: 'wake-run', run_id: row.run_id, row_id: null, deliveries: 1 };
  return { runId: row.run_id, job };
}
