import { openRunStatuses } from './types.ts';
import type { Db } from './types.ts';

/** Open child runs that a parent's cancellation reaches (policy propagate). */
export async function listOpenChildren(db: Db, parentRunId: string): Promise<string[]> {
  const rows = await db.flowRun.findMany({
    where: {
      parent_run_id: parentRunId,
      parent_cancel_policy: 'propagate',
      status: { in: [...openRunStatuses] },
    },
    select: { id: true },
  });
  return rows.map((r) => r.id);
}
