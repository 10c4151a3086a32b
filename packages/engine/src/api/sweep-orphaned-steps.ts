import { orphanedStepReason } from '../runtime/orphaned-step-reason.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { findOrphanedSteps } from '../store/find-orphaned-steps.ts';
import { markRunStuck } from '../store/mark-run-stuck.ts';
import { HeldRunWaits, onMonitoredRun } from '../sweeps/on-monitored-run.ts';

/**
 * One pass of the monitor over steps Running with no reclaim deadline whose worker is gone (ADR
 * 0010): nothing will ever finish them, so their run gets a stuck reason naming the step, the worker
 * and since when, and the repair (engine.reclaimStep, kick; the doctor does it when enabled), and
 * `run.stuck` goes in its history.
 */
export async function sweepOrphanedSteps(
  deps: RuntimeDeps,
  opts: {
    limit?: number;
    /** Renews the sweeper's lease; false (lost) stops the sweep before the next run. */
    keep?: () => Promise<boolean>;
  } = {},
): Promise<{ marked: number }> {
  const orphans = await findOrphanedSteps(deps.prisma, {
    deadAfterSeconds: deps.config.worker.dead_after_seconds,
    unmarkedOnly: true,
    limit: opts.limit ?? deps.config.monitor.expiration.page_size,
  });
  let marked = 0;
  const waits = HeldRunWaits.of(deps);
  for (const o of orphans) {
    if (o.stuck_reason !== null) continue;
    if (opts.keep && !(await opts.keep())) break;
    const stuckReason = orphanedStepReason(o);
    const now = deps.clock.now();
    const done = await onMonitoredRun(
      deps,
      'owner_gone',
      o.run_id,
      'no key update',
      (tx) => markRunStuck(tx, { runId: o.run_id, stuckReason, now }),
      waits,
    );
    if (done === true) marked += 1;
  }
  return { marked };
}
