import type { RawDb } from '../db/raw-db.ts';
import type { DbFlowRun } from './find-run.ts';
import { statusIn } from './keyed-status.ts';
import type { LoadedRun } from './load-run-for-replay.ts';
import { newestRunnable } from './newest-runnable.ts';

export interface DbJob {
  id: bigint;
  kind: string;
  run_id: string | null;
  row_id: string | null;
  deliveries: number;
  /**
   * The job's run, marked active by the claim itself (ADR 0100): a run still Pending, on time and
   * of a flow in `flows`, as loadRunForReplay would have loaded and marked it. Absent otherwise: the
   * replay loads the run as before.
   */
  loaded?: LoadedRun;
}

type ClaimRow = Partial<DbFlowRun> & {
  job_id: bigint;
  job_kind: string;
  job_run_id: string | null;
  job_row_id: string | null;
  job_deliveries: number;
  active_version: number | null;
};

/**
 * Leases up to `limit` due jobs. SKIP LOCKED keeps concurrent workers off each other's rows; the
 * lease (locked_until) makes a job whose worker died visible again: at-least-once delivery.
 *
 * In the same statement, a run whose wake it leases and that never ran (Pending: a start queued by
 * another process, or one no pool took at once) is marked active as loadRunForReplay marks it
 * (Running, `started_at`, `version` + 1, `run.running`), when it is on time and of a flow in `flows`
 * at a version no newer than `versions` has for it (ADR 0112),
 * and its row comes back with the job (ADR 0100). The replay then needs no load of its own: no
 * transaction, no round trip, one commit fewer per run. The run's row is locked FOR NO KEY UPDATE
 * SKIP LOCKED: one another transaction holds (a cancellation, a repair) is left to the load, which
 * waits for it, so the claim never waits for a run. A Pending run has no step rows, so nothing else
 * is read for it; every other run is loaded by its replay as before.
 *
 * The runs are found by their ids only: the flow test is on the locked rows, not in their scan. In
 * the scan, `flow_name = any(…)` let the planner read them through an index led by the flow's name
 * (filtering by id), every run of the flow per claim, as soon as the statistics made that look cheap
 * (the runs' backlog test caught it: ADR 0098).
 */
export async function claimJobs(
  db: RawDb,
  args: {
    workerId: string;
    limit: number;
    leaseSeconds: number;
    now: Date;
    flows?: readonly string[];
    versions?: readonly number[];
  },
): Promise<DbJob[]> {
  const rows = await db.$queryRaw<ClaimRow[]>`/* sagaflow: job claims */
    with claimed as (
      update "sagaflow"."jobs" j
         set locked_by = ${args.workerId},
             locked_until = ${args.now}::timestamptz + make_interval(secs => ${args.leaseSeconds}::int),
             deliveries = j.deliveries + 1
       where j.id in (
         select id from "sagaflow"."jobs"
          where available_at <= ${args.now}::timestamptz and (locked_until is null or locked_until < ${args.now}::timestamptz)
          order by available_at, id
          limit ${args.limit}::int
          for update skip locked)
      returning j.id, j.kind, j.run_id, j.row_id, j.deliveries
    ), prev as (
      select r.* from "sagaflow"."flow_runs" r
       where r.id in (select c.run_id from claimed c where c.kind = 'wake-run')
         and ${statusIn('r.status', ['Pending'])}
         and (r.run_timeout_at is null or r.run_timeout_at > ${args.now}::timestamptz)
         and (r.cancel_deadline_at is null or r.cancel_deadline_at > ${args.now}::timestamptz)
       order by r.id
         for no key update skip locked
    ), upd as (
      update "sagaflow"."flow_runs" r
         set status = 'Running', waiting_for = null, stuck_reason = null,
             started_at = coalesce(r.started_at, ${args.now}::timestamptz), updated_at = ${args.now}::timestamptz,
             version = r.version + 1
        from prev p
       where r.id = p.id and p.flow_name = any(${[...(args.flows ?? [])]}::text[])
         and ${newestRunnable({ flows: args.flows ?? [], versions: args.versions }, 'p')}
      returning r.id, r.version
    ), event as (
      insert into "sagaflow"."flow_events" (run_id, type)
      select u.id, 'run.running' from upd u join prev p on p.id = u.id where p.started_at is null)
    select c.id as job_id, c.kind as job_kind, c.run_id::text as job_run_id, c.row_id::text as job_row_id,
           c.deliveries as job_deliveries, u.version as active_version, p.*
      from claimed c
      left join upd u on u.id = c.run_id
      left join prev p on p.id = u.id`;
  // Two wakes of one run leased together (its start's and a kick's, say): the row goes with the first
  // only; the other's replay loads the run, as two wakes' replays always did.
  const marked = new Set<string>();
  return rows.map(({ job_id, job_kind, job_run_id, job_row_id, job_deliveries, active_version, ...run }) => {
    const job: DbJob = {
      id: job_id,
      kind: job_kind,
      run_id: job_run_id,
      row_id: job_row_id,
      deliveries: job_deliveries,
    };
    if (active_version !== null && run.id !== undefined && !marked.has(run.id)) {
      marked.add(run.id);
      job.loaded = { run: run as DbFlowRun, activeVersion: active_version };
    }
    return job;
  });
}
