import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { enqueueJob } from '../store/enqueue-job.ts';
import { findRunsNeedingRepair } from '../store/find-runs-needing-repair.ts';
import { lockOpenRun } from '../store/lock-open-run.ts';

/**
 * One pass of the doctor: a fresh job for each run whose job was lost (R1–R3), within the run's
 * repair budget, each re-dispatch recorded in the run's history in the same transaction.
 */
export async function sweepDoctor(
  deps: RuntimeDeps,
  opts: { limit?: number } = {},
): Promise<{ redispatched: { runId: string; rule: string }[] }> {
  const cfg = deps.config.repair;
  const now = deps.clock.now();
  const redispatched = await deps.prisma.$transaction(async (tx) => {
    const found = await findRunsNeedingRepair(tx, {
      now,
      graceSeconds: cfg.grace_seconds,
      budget: cfg.budget,
      staleRunning: cfg.redispatch_stale_running_actions,
      limit: opts.limit ?? 100,
    });
    const open = [];
    for (const c of found) {
      // A run that finished since it was found gets nothing more (lockOpenRun).
      if (!(await lockOpenRun(tx, c.run_id))) continue;
      open.push(c);
      await tx.flowRun.update({ where: { id: c.run_id }, data: { repair_count: { increment: 1 } } });
      await enqueueJob(tx, { kind: 'wake-run', runId: c.run_id, availableAt: now });
      await appendFlowEvent(tx, {
        runId: c.run_id,
        type: 'doctor.redispatched',
        data: { rule: c.rule, detail: c.detail },
      });
    }
    return open.map((c) => ({ runId: c.run_id, rule: c.rule }));
  });
  return { redispatched };
}
