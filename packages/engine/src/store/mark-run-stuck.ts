import { openRunStatusesSql } from './step-table.ts';
import type { Db } from './types.ts';

/**
 * Gives an open run a stuck reason found from outside its replay (the monitor), unless it already
 * has one. Bumps the version, like a park: a healthy park by an older replay does not erase it.
 */
export async function markRunStuck(db: Db, args: { runId: string; stuckReason: string; now: Date }): Promise<boolean> {
  const n = await db.$executeRaw`
    update "sagaflow"."flow_runs"
       set stuck_reason = ${args.stuckReason}, updated_at = ${args.now}::timestamptz, version = version + 1
     where id = ${args.runId}::uuid and status in ${openRunStatusesSql} and stuck_reason is null`;
  return n === 1;
}
