import type { Json } from '../definitions/define-action.ts';
import type { Db } from './types.ts';

/** Settles a run once: the write only lands while the run is open. */
export async function finishRun(
  db: Db,
  args: { id: string; status: 'Completed' | 'Failed'; output?: Json; error?: Json },
): Promise<boolean> {
  const res = await db.flowRun.updateMany({
    where: { id: args.id, status: { in: ['Pending', 'Running', 'Waiting', 'Compensating'] } },
    data: {
      status: args.status,
      output: args.output === undefined ? undefined : (args.output as never),
      error: args.error === undefined ? undefined : (args.error as never),
      stuck_reason: null,
      finished_at: new Date(),
      updated_at: new Date(),
      version: { increment: 1 },
    },
  });
  return res.count === 1;
}
