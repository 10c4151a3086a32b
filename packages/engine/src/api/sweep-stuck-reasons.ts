import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { changeStuckReason } from '../store/change-stuck-reason.ts';
import {
  findChildStuckChanges,
  findOwnerGoneCleared,
  type StuckReasonChange,
} from '../store/find-stuck-reason-changes.ts';
import { HeldRunWaits, onMonitoredRun } from '../sweeps/on-monitored-run.ts';

/** What one pass of {@link sweepStuckReasons} changed. */
export interface StuckReasonsPass {
  /** `owner_gone` reasons cleared: the worker beats again, or the step is no longer held by a gone one. */
  ownerGoneCleared: number;
  /** Parents given a `child_stuck` reason, or whose reason now names another child or reason. */
  childStuckMarked: number;
  /** Parents whose `child_stuck` reason was cleared: no child of theirs is stuck now. */
  childStuckCleared: number;
}

/**
 * The monitor re-judges the stuck reasons it reads from outside a run (ADR 0124): an `owner_gone`
 * that no longer holds is cleared (`run.unstuck`), and a parent parked on a stuck child says so
 * (`child_stuck: child run <id> is stuck (<reason>)`) until that child moves on. At most `limit` runs
 * of each kind per pass, each in its own short transaction.
 */
export async function sweepStuckReasons(
  deps: RuntimeDeps,
  opts: {
    limit?: number;
    /** Renews the sweeper's lease; false (lost) stops the sweep before the next run. */
    keep?: () => Promise<boolean>;
  } = {},
): Promise<StuckReasonsPass> {
  const limit = opts.limit ?? deps.config.monitor.expiration.page_size;
  const pass: StuckReasonsPass = { ownerGoneCleared: 0, childStuckMarked: 0, childStuckCleared: 0 };
  const waits = HeldRunWaits.of(deps);
  // A replica that lost the monitor's lease meanwhile changes nothing more (review 62).
  let lost = false;
  const apply = async (c: StuckReasonChange) =>
    !(lost ||= opts.keep !== undefined && !(await opts.keep())) &&
    (await onMonitoredRun(
      deps,
      'stuck reason',
      c.run_id,
      'no key update',
      (tx) => changeStuckReason(tx, { runId: c.run_id, from: c.stuck_reason, to: c.next, now: deps.clock.now() }),
      waits,
    )) === true;
  const cleared = await findOwnerGoneCleared(deps.prisma, {
    deadAfterSeconds: deps.config.worker.dead_after_seconds,
    limit,
  });
  for (const c of cleared) if (await apply(c)) pass.ownerGoneCleared += 1;
  for (const c of await findChildStuckChanges(deps.prisma, { limit }))
    if (await apply(c)) {
      if (c.next === null) pass.childStuckCleared += 1;
      else pass.childStuckMarked += 1;
    }
  return pass;
}
