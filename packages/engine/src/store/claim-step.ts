import { Prisma } from '../generated/prisma/client.ts';
import { tableSql, type StepTable } from './step-table.ts';
import type { RawDb } from '../db/raw-db.ts';
import { stepEventCte, type StepEvent } from './step-event.ts';
import { openRunByKey, statusIn } from './keyed-status.ts';

/**
 * The claim: ONE conditional update (compare-and-swap) on an action or compensation row. It accepts
 * a Pending row, a Failed row (between its own retries) whose retry time has come, or a Running row
 * whose reclaim deadline has passed, and only while the run is open, serialized with its terminal transition. It increments attempts and
 * derives reclaim_stale_at from the row's own window. A replay that loaded the run before a
 * cancellation or expiry reached it (`cancellationKnown: false`) is refused too, and so is a compensation
 * once the run's cleanup window has closed (a terminate's fence closes it under a replay already rolling
 * back: review 66). Returns the
 * attempts value this claim produced, or null when the claim was lost. A won claim's history row
 * (`event`) is appended by the same statement.
 */
export async function claimStep(
  db: RawDb,
  args: {
    table: StepTable;
    id: string;
    workerId: string;
    now: Date;
    /** False when the replay has not seen a cancellation: refuse if the run has one (it is stale). */
    cancellationKnown?: boolean;
    /** The history row of a won claim, appended by the same statement (none when the claim is lost). */
    event?: StepEvent;
  },
): Promise<number | null> {
  // The run's row is locked FOR KEY SHARE (see lockOpenRun): a terminate cannot commit between this
  // check and the claim's commit, and a claim waiting behind a terminate sees the run finished.
  const rows = await db.$queryRaw<{ attempts: number }[]>(Prisma.sql`
    with run as (
      select r.id from "sagaflow"."flow_runs" r
       where r.id = (select t.run_id from ${tableSql(args.table)} t where t.id = ${args.id}::uuid)
         and ${openRunByKey('r.status')}
         and (r.cancel_requested_at is null or ${args.cancellationKnown ?? true})${
           args.table === 'compensation_runs'
             ? Prisma.sql`
         and (r.cancel_deadline_at is null or r.cancel_deadline_at > ${args.now}::timestamptz)`
             : Prisma.empty
         }
         for key share
    ), claimed as (
      update ${tableSql(args.table)} s
         set status = 'Running',
             attempts = s.attempts + 1,
             claimed_by = ${args.workerId},
             started_at = coalesce(s.started_at, ${args.now}::timestamptz),
             updated_at = ${args.now}::timestamptz,
             reclaim_stale_at = case when s.reclaim_stale_after_seconds is null then null
                                     else ${args.now}::timestamptz + make_interval(secs => s.reclaim_stale_after_seconds) end
       where s.id = ${args.id}::uuid
         and (${statusIn('s.status', ['Pending'])}
              or (${statusIn('s.status', ['Failed'])} and s.available_at <= ${args.now}::timestamptz)
              or (${statusIn('s.status', ['Running'])} and s.reclaim_stale_at is not null and s.reclaim_stale_at < ${args.now}::timestamptz))
         and s.run_id in (select id from run)
      returning s.id, s.run_id, s.attempts)${stepEventCte(args.event, 'claimed')}
    select attempts from claimed`);
  return rows[0]?.attempts ?? null;
}
