import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { appendFlowEvent } from '../store/append-flow-event.ts';
import { countRepairCandidates } from '../store/count-repair-candidates.ts';
import { findOrphanedSteps } from '../store/find-orphaned-steps.ts';
import { redispatchLostRuns } from '../store/redispatch-lost-runs.ts';
import { firstRunId } from '../store/repair-candidates-sql.ts';
import { orphanedStepReason } from '../runtime/orphaned-step-reason.ts';
import { inSweepTransaction } from '../sweeps/in-sweep-transaction.ts';
import { HeldRunWaits, noteHeldRuns, onMonitoredRun } from '../sweeps/on-monitored-run.ts';
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
    await noteHeldRuns(deps, 'doctor', r);
    pass.add(r.scanned);
    if (r.last === null || r.scanned < batch) break;
    after = r.last;
  }
  const left = stopped ? await countRepairCandidates(deps.prisma, { ...rules, now: deps.clock.now(), after }) : 0;
  pass.end(left);
  out.push(...(await reclaimOrphans(deps, batch, opts.keep)));
  return { redispatched: out, more: left > 0 };
}

/**
 * R4 (ADR 0010): a step Running with no reclaim deadline under a worker that is gone is reclaimed. Each
 * run in a transaction of its own, its row taken as a kick and a reclaim take it (no key update), waited
 * for within the sweep's allowance (ADR 0135): a run (or a step of it) another session holds past it is
 * passed over until the next pass, and the others are still reclaimed (review 60). Two doctors, or a doctor and a kick, at once: one reclaims.
 */
async function reclaimOrphans(
  deps: RuntimeDeps,
  limit: number,
  keep?: () => Promise<boolean>,
): Promise<DoctorPass['redispatched']> {
  const cfg = deps.config.repair;
  const out: DoctorPass['redispatched'] = [];
  // Only runs with budget left: one whose budget is spent keeps its orphan (its stuck reason says so) and
  // must not fill the page before the runs that can still be reclaimed (review 62).
  const orphans = await findOrphanedSteps(deps.prisma, {
    deadAfterSeconds: deps.config.worker.dead_after_seconds,
    repairBudget: cfg.budget,
    limit,
  });
  const byRun = new Map<string, typeof orphans>();
  for (const o of orphans) byRun.set(o.run_id, [...(byRun.get(o.run_id) ?? []), o]);
  const waits = HeldRunWaits.of(deps);
  for (const [runId, steps] of byRun) {
    // A replica that lost the monitor's lease meanwhile reclaims nothing more (review 62).
    if (keep && !(await keep())) break;
    const done = await onMonitoredRun(
      deps,
      'doctor',
      runId,
      'no key update',
      async (tx) => {
        const run = await tx.flowRun.findUniqueOrThrow({ where: { id: runId }, select: { repair_count: true } });
        let spent = run.repair_count;
        const reclaimed: DoctorPass['redispatched'] = [];
        for (const o of steps) {
          if (spent >= cfg.budget) break;
          const r = await reclaimOrphan(deps, tx, o, 'doctor');
          if (!r.reclaimed) continue;
          spent += 1;
          await tx.flowRun.update({ where: { id: runId }, data: { repair_count: { increment: 1 } } });
          const detail = orphanedStepReason(o).split(';')[0] ?? '';
          await appendFlowEvent(tx, { runId, type: 'doctor.redispatched', data: { rule: 'R4', detail } });
          reclaimed.push({ runId, rule: 'R4' });
        }
        return reclaimed;
      },
      waits,
    );
    if (Array.isArray(done)) out.push(...done);
  }
  return out;
}
