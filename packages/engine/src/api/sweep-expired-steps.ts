import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { enqueueJob } from '../store/enqueue-job.ts';
import { expireOverdueSteps } from '../store/expire-overdue-steps.ts';
import type { StepTable } from '../store/step-table.ts';

/**
 * One pass of the expiration monitor over steps: each overdue action or compensation is marked
 * Expired in the same transaction as its history row and a wake for its run, whose replay then
 * sees an action fail as a business failure (and compensates, if the flow says so), or a
 * compensation end unfinished. Pages through `pageSize` rows at a time.
 */
export async function sweepExpiredSteps(
  deps: RuntimeDeps,
  opts: {
    pageSize?: number;
    maxPages?: number;
    /** Renews the sweeper's lease; false (lost) stops the sweep before the next page. */
    keep?: () => Promise<boolean>;
  } = {},
): Promise<{ expired: number }> {
  const pageSize = opts.pageSize ?? deps.config.monitor.expiration.page_size;
  let expired = 0;
  for (const table of ['action_runs', 'compensation_runs'] as const satisfies StepTable[]) {
    for (let page = 0; page < (opts.maxPages ?? 10); page++) {
      if (opts.keep && !(await opts.keep())) return { expired };
      const now = deps.clock.now();
      const rows = await deps.prisma.$transaction(async (tx) => {
        const done = await expireOverdueSteps(tx, { table, now, limit: pageSize });
        for (const row of done) {
          await appendFlowEvent(tx, {
            runId: row.run_id,
            type: table === 'action_runs' ? 'action.expired' : 'compensation.expired',
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
  }
  return { expired };
}
