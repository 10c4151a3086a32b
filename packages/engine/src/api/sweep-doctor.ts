import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { countRepairCandidates } from '../store/count-repair-candidates.ts';
import { findOrphanedSteps } from '../store/find-orphaned-steps.ts';
import { tryLockOpenRun } from '../store/try-lock-open-run.ts';
import { redispatchLostRuns } from '../store/redispatch-lost-runs.ts';
import { firstRunId } from '../store/repair-candidates-sql.ts';
import { orphanedStepReason } from '../runtime/orphaned-step-reason.ts';
import { inSweepTransaction } from '../sweeps/in-sweep-transaction.ts';
import { monitorLockWaitMs } from '../sweeps/on-monitored-run.ts';
import { reclaimOrphan } from './reclaim-step.ts';

export interface DoctorPass {
  redispatched: { runId: string; rule: string }[];
  /** Candidates were left because the pass used its time budget (or the lease was lost). */
  more: boolean;
}

/**
 * One pass of the doctor: a fresh job for each run whose job was lost (R1–R3), and a reclaim of each
 * step Running with no reclaim deadline under a worker that is gone (R4, ADR 0010), within the run's
 * repair budget, each re-dispatch recorded in the run's history in the same transaction. R1–R3 walk
 * the candidates once per pass in run-id order, `sweeps.batch_size` rows per set-based statement,
 * until none are left or the pass has used `sweeps.pass_budget_ms` (ADR 0026).
 */
export async function sweepDoctor(
  deps: RuntimeDeps,
  opts: {
    limit?: number;
    /** Renews the sweeper's lease; false (lost) stops the pass before the next batch. */
    keep?: () => Promise<boolean>;
  } = {},
): Promise<DoctorPass> {
  const cfg = deps.config.repair;
  const sweeps = deps.config.sweeps;
  const batch = opts.limit ?? sweeps.batch_size;
  const pass = deps.progress.start('doctor', { budgetMs: sweeps.pass_budget_ms, logger: deps.logger });
  const rules = { graceSeconds: cfg.grace_seconds, staleRunning: cfg.redispatch_stale_running_actions };
  const out: DoctorPass['redispatched'] = [];
  let after = firstRunId;
  let stopped = false;
  for (;;) {
    if (pass.outOfTime() || (opts.keep && !(await opts.keep()))) {
      stopped = true;
      break;
    }
    const now = deps.clock.now();
    const r = await inSweepTransaction(deps.prisma, sweeps.transaction_timeout_ms, (tx) =>
      redispatchLostRuns(tx, { ...rules, now, after, budget: cfg.budget, limit: batch }),
    );
    out.push(...r.redispatched);
    pass.add(r.scanned);
    if (r.last === null || r.scanned < batch) break;
    after = r.last;
  }
  const left = stopped ? await countRepairCandidates(deps.prisma, { ...rules, now: deps.clock.now(), after }) : 0;
  pass.end(left);
  out.push(...(await reclaimOrphans(deps, batch)));
  return { redispatched: out, more: left > 0 };
}

/** R4 (ADR 0010): a step Running with no reclaim deadline under a worker that is gone is reclaimed. */
async function reclaimOrphans(deps: RuntimeDeps, limit: number): Promise<DoctorPass['redispatched']> {
  const cfg = deps.config.repair;
  return inSweepTransaction(
    deps.prisma,
    deps.config.sweeps.transaction_timeout_ms,
    async (tx) => {
      const out: DoctorPass['redispatched'] = [];
      const orphans = await findOrphanedSteps(tx, { deadAfterSeconds: deps.config.worker.dead_after_seconds, limit });
      const budgets = new Map<string, number>();
      for (const o of orphans) {
        // A run that finished since it was found gets nothing more (lockOpenRun).
        if (!budgets.has(o.run_id)) {
          // A run another session holds is passed over until the next pass (review 58), as one finished is.
          const lock = await tryLockOpenRun(tx, o.run_id);
          if (lock === 'held')
            deps.logger.info({ runId: o.run_id }, `doctor: run ${o.run_id} is held by another session; passed over`);
          if (lock !== 'locked') continue;
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
    },
    // Any other row (a step) another session holds is waited for briefly, not for the sweep's whole limit.
    { lock_timeout: String(monitorLockWaitMs) },
  );
}
