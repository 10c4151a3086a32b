import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { countOverdueSteps } from '../store/count-overdue-steps.ts';
import { expireOverdueSteps } from '../store/expire-overdue-steps.ts';
import type { StepTable } from '../store/step-table.ts';
import { inSweepTransaction } from '../sweeps/in-sweep-transaction.ts';
import { noteHeldRuns } from '../sweeps/on-monitored-run.ts';

const tables = ['action_runs', 'compensation_runs'] as const satisfies StepTable[];

/**
 * One pass of the expiration monitor over steps: each overdue action or compensation is marked
 * Expired in the same transaction as its history row and a wake for its run, whose replay then
 * sees an action fail as a business failure (and compensates, if the flow says so), or a
 * compensation end unfinished. Batches of `sweeps.batch_size` rows, each one set-based statement in
 * its own transaction, until the backlog is drained or the pass has used `sweeps.pass_budget_ms`
 * (ADR 0026); `more` says rows are left, so the loop runs the next pass at once.
 */
export async function sweepExpiredSteps(
  deps: RuntimeDeps,
  opts: {
    pageSize?: number;
    /** A cap on batches per table (tests); by default only the time budget bounds a pass. */
    maxPages?: number;
    /** Renews the sweeper's lease; false (lost) stops the sweep before the next batch. */
    keep?: () => Promise<boolean>;
  } = {},
): Promise<{ expired: number; more: boolean }> {
  const cfg = deps.config.sweeps;
  const batch = opts.pageSize ?? cfg.batch_size;
  const pass = deps.progress.start('expired_steps', { budgetMs: cfg.pass_budget_ms, logger: deps.logger });
  let stopped = false;
  for (const table of tables) {
    for (let page = 0; ; page++) {
      if (page >= (opts.maxPages ?? Infinity) || pass.outOfTime() || (opts.keep && !(await opts.keep()))) {
        stopped = true;
        break;
      }
      const now = deps.clock.now();
      const done = await inSweepTransaction(deps.prisma, cfg.transaction_timeout_ms, (tx) =>
        expireOverdueSteps(tx, { table, now, limit: batch }),
      );
      await noteHeldRuns(deps, 'step expiry', done);
      pass.add(done.expired);
      if (done.expired < batch) break;
    }
    if (stopped) break;
  }
  const left = stopped ? await countLeft(deps) : 0;
  pass.end(left);
  return { expired: pass.done, more: left > 0 };
}

async function countLeft(deps: RuntimeDeps): Promise<number> {
  const now = deps.clock.now();
  let left = 0;
  for (const table of tables) left += await countOverdueSteps(deps.prisma, { table, now });
  return left;
}
