import type { RawDb } from '../db/raw-db.ts';
import { openRunByKey } from './keyed-status.ts';

/**
 * Open child runs that a parent's cancellation reaches (policy propagate), in id order: the order
 * `listOpenTree` (lock-open-tree.ts) lists a parent's children in, so a command ends them in the order its preview showed.
 * Raw SQL, so a run's own transaction on the driver's path (a parent's end, a child's start) can send it too.
 */
export async function listOpenChildren(db: RawDb, parentRunId: string): Promise<string[]> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    select id from "sagaflow"."flow_runs"
     where parent_run_id = ${parentRunId}::uuid and parent_cancel_policy = 'propagate'
       and ${openRunByKey('status')}
     order by id`;
  return rows.map((r) => r.id);
}
