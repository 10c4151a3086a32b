import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { enqueueJob } from '../store/enqueue-job.ts';
import { findOrphanedSteps } from '../store/find-orphaned-steps.ts';
import { findRunsNeedingRepair } from '../store/find-runs-needing-repair.ts';
import { lockOpenRun } from '../store/lock-open-run.ts';
import { orphanedStepReason } from '../runtime/orphaned-step-reason.ts';
import { reclaimOrphan } from './reclaim-step.ts';

/**
 * One pass of the doctor: a fresh job for each run whose job was lost (R1–R3), and a reclaim of each
 * step Running with no reclaim deadline under a worker that is gone (R4, ADR 0010), within the run's
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
    const out: { runId: string; rule: string }[] = open.map((c) => ({ runId: c.run_id, rule: c.rule }));
    // R4 (ADR 0010): a step Running with no reclaim deadline under a worker that is gone is reclaimed.
    const orphans = await findOrphanedSteps(tx, {
      deadAfterSeconds: deps.config.worker.dead_after_seconds,
      limit: opts.limit ?? 100,
    });
    const budgets = new Map<string, number>();
    for (const o of orphans) {
      // A run that finished since it was found gets nothing more (lockOpenRun).
      if (!budgets.has(o.run_id)) {
        if (!(await lockOpenRun(tx, o.run_id))) continue;
        const run = await tx.flowRun.findUniqueOrThrow({ where: { id: o.run_id }, select: { repair_count: true } });
        budgets.set(o.run_id, run.repair_count);
      }
      const spent = budgets.get(o.run_id) ?? cfg.budget;
      if (spent >= cfg.budget) continue;
      const r = await reclaimOrphan(deps, tx, o, 'doctor');
      if (!r.reclaimed) continue;
      budgets.set(o.run_id, spent + 1);
      await tx.flowRun.update({ where: { id: o.run_id }, data: { repair_count: { increment: 1 } } });
      const detail = orphanedStepReason(o).split(';')[0] ?? '';
      await appendFlowEvent(tx, { runId: o.run_id, type: 'doctor.redispatched', data: { rule: 'R4', detail } });
      out.push({ runId: o.run_id, rule: 'R4' });
    }
    return out;
  });
  return { redispatched };
}
