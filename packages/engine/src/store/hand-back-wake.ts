import type { RawDb } from '../db/raw-db.ts';
import { statusIn } from './keyed-status.ts';
import { lastStuckEvent } from './record-stuck-change.ts';

/** The stuck reasons a hand-back writes (ADR 0112): no other reason is replaced by one of them. */
export const handBackReasons = ['unknown_flow', 'no_worker_for_version'] as const;

/**
 * Hands a run's wake back for a worker whose code can run it (ADR 0112), in ONE statement, and leaves
 * every step row alone:
 * - the job (only while this worker holds its lease) is released, due again after a delay that doubles
 *   with its deliveries, from `baseMs` up to `maxMs`; its delivery count is kept as it is (nothing makes
 *   a job dead by it);
 * - the run gets `reason` (Waiting, or still Compensating), with `run.stuck` when the episode is new, only
 *   when no replay is running it now: its version is still the one this worker's load saw, its status
 *   then was Pending or Waiting (or Compensating and parked: it waits for something or is stuck), and its
 *   stuck reason is none, or one a hand-back wrote. A run a worker with the right code has marked active
 *   (its load bumped the version and cleared both columns) keeps that replay's state; a reason another
 *   part of the engine gave (replay_blocked, ...) is not replaced; the same reason is not written again.
 * The run's row is updated before the job's, so locks are taken run first, as a finish takes them.
 */
export async function handBackWake(
  db: RawDb,
  args: {
    runId: string;
    /** The job to hand back; null when the replay has none (it is then only the reason). */
    jobId: bigint | null;
    workerId: string;
    /** The run's version as the load that did not mark it saw it. */
    seenVersion: number;
    reason: string;
    baseMs: number;
    maxMs: number;
    now: Date;
  },
): Promise<{ jobHandedBack: boolean; reasonWritten: boolean }> {
  const rows = await db.$queryRaw<{ job: number; run: number }[]>`
    with run as (
      update "sagaflow"."flow_runs" r
         set status = case when r.status = 'Compensating' then 'Compensating' else 'Waiting' end,
             stuck_reason = ${args.reason}, updated_at = ${args.now}::timestamptz, version = r.version + 1
       where r.id = ${args.runId}::uuid and r.version = ${args.seenVersion}::int
         and (${statusIn('r.status', ['Pending', 'Waiting'])}
              or (${statusIn('r.status', ['Compensating'])} and (r.waiting_for is not null or r.stuck_reason is not null)))
         and (r.stuck_reason is null or split_part(r.stuck_reason, ':', 1) = any(${[...handBackReasons]}::text[]))
         and r.stuck_reason is distinct from ${args.reason}::text
      returning r.id
    ), stuck as (
      insert into "sagaflow"."flow_events" (run_id, type, data)
      select r.id, 'run.stuck', jsonb_build_object('reason', ${args.reason}::text)
        from run r
        left join lateral ${lastStuckEvent(args.runId)} last on true
       where last.type is distinct from 'run.stuck'
          or split_part(last.data->>'reason', ':', 1) <> split_part(${args.reason}::text, ':', 1)
    ), job as (
      update "sagaflow"."jobs" j
         set locked_by = null, locked_until = null,
             available_at = ${args.now}::timestamptz + make_interval(secs => least(
               ${args.baseMs}::float8 * power(2::float8, least(greatest(j.deliveries, 1) - 1, 20)),
               ${args.maxMs}::float8) / 1000.0)
       where j.id = ${args.jobId}::bigint and j.locked_by = ${args.workerId}
         and (select count(*) from run) >= 0
      returning j.id
    )
    select (select count(*) from job)::int as job, (select count(*) from run)::int as run`;
  const row = rows[0];
  return { jobHandedBack: (row?.job ?? 0) > 0, reasonWritten: (row?.run ?? 0) > 0 };
}
