import type { DbFlowRun } from './find-run.ts';
import type { RawDb } from '../db/raw-db.ts';
import { openRunByKey } from './keyed-status.ts';
import { newestRunnable } from './newest-runnable.ts';

/** A run as a replay loads it: the row as it was, and the version its marking active produced. */
export interface LoadedRun {
  run: DbFlowRun;
  /**
   * The run's version after it was marked active, or null when it was not (finished, overdue, a flow
   * this worker does not have, or a newer version of it than this worker has).
   */
  activeVersion: number | null;
}

/**
 * Loads a run for replay in ONE statement: its row, locked FOR NO KEY UPDATE, as it was; and, when it
 * is open, not past its run timeout or cleanup window, and of a flow this worker has (`flows`) at a
 * version no newer than the one it has (`versions`, by position; ADR 0112), marked
 * active as markRunActive would (Running, or Compensating when it was; no wait or stuck reason), with
 * its `run.running` appended when it never ran before (no `started_at`): a Pending run, or one a worker
 * without its flow parked stuck (Waiting) before any replay ran it. A run that is overdue, of an
 * unknown flow or of a newer version is returned unmarked, for the caller to time out, close or hand
 * back. Null when there is no such run.
 */
export async function loadRunForReplay(
  db: RawDb,
  args: { runId: string; now: Date; flows: readonly string[]; versions?: readonly number[] },
): Promise<LoadedRun | null> {
  const rows = await db.$queryRaw<(DbFlowRun & { active_version: number | null })[]>`
    with prev as (
      select * from "sagaflow"."flow_runs" where id = ${args.runId}::uuid for no key update
    ), upd as (
      update "sagaflow"."flow_runs" r
         set status = case when p.status = 'Compensating' then 'Compensating' else 'Running' end,
             waiting_for = null, stuck_reason = null,
             started_at = coalesce(r.started_at, ${args.now}::timestamptz), updated_at = ${args.now}::timestamptz,
             version = r.version + 1
        from prev p
       where r.id = p.id and ${openRunByKey('p.status')}
         and (p.run_timeout_at is null or p.run_timeout_at > ${args.now}::timestamptz)
         and (p.cancel_deadline_at is null or p.cancel_deadline_at > ${args.now}::timestamptz)
         and p.flow_name = any(${[...args.flows]}::text[])
         and ${newestRunnable(args, 'p')}
      returning r.id, r.version
    ), event as (
      insert into "sagaflow"."flow_events" (run_id, type)
      select u.id, 'run.running' from upd u, prev p where p.started_at is null)
    select p.*, u.version as active_version from prev p left join upd u on true`;
  const row = rows[0];
  if (!row) return null;
  const { active_version: activeVersion, ...run } = row;
  return { run, activeVersion };
}
