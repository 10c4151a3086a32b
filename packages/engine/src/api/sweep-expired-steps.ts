import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { enqueueJob } from '../store/enqueue-job.ts';
import { expireOverdueSteps } from '../store/expire-overdue-steps.ts';

/**
 * One pass of the expiration monitor over steps: each overdue step is marked Expired in the same
 * transaction as its history row and a wake for its run, whose replay then sees the step fail as a
 * business failure (and compensates, if the flow says so). Pages through `pageSize` at a time.
 */
export async function sweepExpiredSteps(
  deps: RuntimeDeps,
  opts: { pageSize?: number; maxPages?: number } = {},
): Promise<{ expired: number }> {
  const pageSize = opts.pageSize ?? 100;
  let expired = 0;
  for (let page = 0; page < (opts.maxPages ?? 10); page++) {
    const now = deps.clock.now();
    const rows = await deps.prisma.$transaction(async (tx) => {
      const done = await expireOverdueSteps(tx, { now, limit: pageSize });
      for (const row of done) {
        await appendFlowEvent(tx, {
          runId: row.run_id,
          type: 'action.expired',
          sequence: row.sequence,
          rowId: row.id,
          data: { name: row.name },
        });
        await enqueueJob(tx, { kind: 'wake-run', runId: row.run_id, availableAt: now });
      }
      return done;
    });
    expired += rows.length;
    if (rows.length < pageSize) break;
  }
  return { expired };
}
