import type { Db } from './types.ts';

/**
 * The claim: ONE conditional update (compare-and-swap). It accepts a Pending row, a Failed row
 * (between the action's own retries) whose retry time has come, or a Running row whose reclaim
 * deadline has passed; it increments attempts and derives reclaim_stale_at from the row's own
 * window. Returns the attempts value this claim produced, or null when the claim was lost.
 */
export async function claimActionRun(db: Db, args: { id: string; workerId: string }): Promise<number | null> {
  const rows = await db.$queryRaw<{ attempts: number }[]>`
    update "sagaflow"."action_runs"
       set status = 'Running',
           attempts = attempts + 1,
           claimed_by = ${args.workerId},
           started_at = coalesce(started_at, now()),
           updated_at = now(),
           reclaim_stale_at = case when reclaim_stale_after_seconds is null then null
                                   else now() + make_interval(secs => reclaim_stale_after_seconds) end
     where id = ${args.id}::uuid
       and (status = 'Pending'
            or (status = 'Failed' and available_at <= now())
            or (status = 'Running' and reclaim_stale_at is not null and reclaim_stale_at < now()))
    returning attempts`;
  return rows[0]?.attempts ?? null;
}
