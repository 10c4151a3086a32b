import { openRunStatuses } from './types.ts';
import type { Db } from './types.ts';

/**
 * Open child runs that a parent's cancellation reaches (policy propagate), in id order: the order
 * `listOpenTree` (lock-open-tree.ts) lists a parent's children in, so a command ends them in the order its preview showed.
 */
export async function listOpenChildren(db: Db, parentRunId: string): Promise<string[]> {
  const rows = await db.flowRun.findMany({
    where: {
      parent_run_id: parentRunId,
      parent_cancel_policy: 'propagate',
      status: { in: [...openRunStatuses] },
    },
    select: { id: true },
    orderBy: { id: 'asc' },
  });
  return rows.map((r) => r.id);
}
