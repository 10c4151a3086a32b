import { tableSql, type StepTable } from '../step-table.ts';
import type { Db } from '../types.ts';
import { statusIn } from '../keyed-status.ts';

/**
 * Puts a Running action or compensation row held by a gone worker back to Pending, compare-and-swap
 * on the status, attempts and owner the repair saw: the engine's ordinary claim takes it next
 * (attempts + 1). The row is no longer Running under the old attempts, so the old owner's late
 * outcome, fenced on exactly that (recordStepOutcome, the same for both tables), is rejected from
 * this commit on, not only after the next claim. Returns whether the row was changed.
 */
export async function releaseOrphanedStep(
  db: Db,
  args: { table: StepTable; id: string; attempts: number; claimedBy: string; now: Date },
): Promise<boolean> {
  const changed = await db.$executeRaw`
    update ${tableSql(args.table)}
       set status = 'Pending', claimed_by = null, reclaim_stale_at = null,
           available_at = ${args.now}::timestamptz, updated_at = ${args.now}::timestamptz
     where id = ${args.id}::uuid and ${statusIn('status', ['Running'])} and attempts = ${args.attempts}::int
       and claimed_by = ${args.claimedBy}`;
  return changed === 1;
}
