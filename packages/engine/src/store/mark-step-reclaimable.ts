import { tableSql, type StepTable } from './step-table.ts';
import type { Db } from './types.ts';
import { statusIn } from './keyed-status.ts';

/**
 * Opens a Running row held by a gone worker to the ordinary claim: its reclaim deadline becomes now.
 * Conditional on the attempts and owner the caller saw, so a row that changed hands meanwhile is
 * left alone, and on its not being open already, so two reclaims at once (a kick and the doctor) open it
 * once (review 60). The next replay then claims it with the normal compare-and-swap (attempts + 1), which
 * fences off a late outcome from the old owner.
 */
export async function markStepReclaimable(
  db: Db,
  args: { table: StepTable; id: string; attempts: number; claimedBy: string; now: Date },
): Promise<boolean> {
  const n = await db.$executeRaw`
    update ${tableSql(args.table)}
       set reclaim_stale_at = ${args.now}::timestamptz - interval '1 millisecond', updated_at = ${args.now}::timestamptz
     where id = ${args.id}::uuid and ${statusIn('status', ['Running'])} and attempts = ${args.attempts}::int
       and claimed_by = ${args.claimedBy} and reclaim_stale_at is null`;
  return n === 1;
}
