import { sweepDoctor, type DoctorPass } from '../api/sweep-doctor.ts';
import { sweepExpiredRuns, type ExpiredRunsPass } from '../api/sweep-expired-runs.ts';
import { sweepExpiredSteps } from '../api/sweep-expired-steps.ts';
import { sweepOrphanedSteps } from '../api/sweep-orphaned-steps.ts';
import { sweepStuckReasons, type StuckReasonsPass } from '../api/sweep-stuck-reasons.ts';
import { sweepUnfinishedTerminates, type UnfinishedTerminatesPass } from '../api/sweep-unfinished-terminates.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { acquireLease, releaseLease } from '../store/acquire-lease.ts';
import { startLoop } from './start-loop.ts';

export interface Monitor {
  stop(): Promise<void>;
}

export type MonitorPass =
  | { swept: false; reason: string }
  | {
      swept: true;
      steps: { expired: number; more: boolean };
      runs: ExpiredRunsPass;
      /** Runs given a stuck reason because a step's worker is gone (ADR 0010). */
      orphans: { marked: number };
      /** Stuck reasons re-judged (ADR 0124): owner_gone that no longer holds, parents of stuck children. */
      stuckReasons: StuckReasonsPass | null;
      /** Terminates left unfinished between their batches, finished (ADR 0140); null when the lease was lost first. */
      terminates: UnfinishedTerminatesPass | null;
      doctor: DoctorPass | null;
      /** A sweep stopped on its time budget with rows left: the loop runs the next pass at once. */
      more: boolean;
    };

/**
 * One pass of the monitor under the `monitor` lease (on the database clock): overdue steps, then
 * overdue runs, then steps whose worker is gone (a stuck reason), then the stuck reasons read from
 * outside a run re-judged (ADR 0124: owner_gone cleared, child_stuck set or cleared), then the doctor if asked. A replica that does not hold the lease sweeps nothing, so
 * two replicas (or a replica and the CLI) never sweep the same page.
 */
export async function runMonitorPass(
  deps: RuntimeDeps,
  opts: { doctor: boolean; expiration?: boolean; ttlSeconds: number; holder?: string; release?: boolean },
): Promise<MonitorPass> {
  const holder = opts.holder ?? deps.workerId;
  const lease = await acquireLease(deps.prisma, { name: 'monitor', holder, ttlSeconds: opts.ttlSeconds });
  if (!lease.held)
    return {
      swept: false,
      reason:
        lease.expiresAt === null
          ? 'another replica holds the monitor lease or has just given it up; run the sweep again'
          : `another replica holds the monitor lease until ${lease.expiresAt.toISOString()} (${lease.holder ?? '?'}); it sweeps`,
    };
  try {
    // The lease is renewed before every page and every overdue run: a pass slower than the lease
    // (many plans, each up to plan_timeout_ms) stops as soon as another replica could have taken over.
    const keep = async () =>
      (await acquireLease(deps.prisma, { name: 'monitor', holder, ttlSeconds: opts.ttlSeconds })).held;
    const expiration = opts.expiration ?? true;
    const steps = expiration ? await sweepExpiredSteps(deps, { keep }) : { expired: 0, more: false };
    const runs = expiration ? await sweepExpiredRuns(deps, { keep }) : { expired: [], failed: [], more: false };
    const orphans = (await keep()) ? await sweepOrphanedSteps(deps, { keep }) : { marked: 0 };
    const stuckReasons = (await keep()) ? await sweepStuckReasons(deps, { keep }) : null;
    const terminates = (await keep()) ? await sweepUnfinishedTerminates(deps, { keep }) : null;
    const doctor = opts.doctor && (await keep()) ? await sweepDoctor(deps, { keep }) : null;
    const more = steps.more || runs.more || (terminates?.more ?? false) || (doctor?.more ?? false);
    return { swept: true, steps, runs, orphans, stuckReasons, terminates, doctor, more };
  } finally {
    if (opts.release) await releaseLease(deps.prisma, { name: 'monitor', holder }).catch(() => undefined);
  }
}

/**
 * The expiration monitor as a loop: every `intervalMs`, the replica that holds the `monitor` lease
 * sweeps overdue steps and runs, and runs the doctor when `repair.enabled`. Any number of replicas
 * may run it; one sweeps.
 */
export function startMonitor(deps: RuntimeDeps, opts: { intervalMs: number }): Monitor {
  const ttlSeconds = Math.max(10, Math.ceil((opts.intervalMs * 3) / 1000));
  // The lease's holder is fixed for the loop's life: the pool's worker id changes when its workers are
  // started again (one id per pool, ADR 0010's second addendum), the monitor's lease must not.
  const holder = deps.workerId;
  const loop = startLoop({
    intervalMs: opts.intervalMs,
    pass: async () => {
      const pass = await runMonitorPass(deps, { doctor: deps.config.repair.enabled, ttlSeconds, holder });
      if (!pass.swept) return false;
      const { steps, runs, doctor } = pass;
      if (steps.expired > 0 || runs.expired.length > 0 || runs.failed.length > 0)
        deps.logger.info(
          { steps: steps.expired, runs: runs.expired.length, expiry_failed: runs.failed.length },
          'monitor expired overdue work',
        );
      // Each sweep logs its own progress (rows done, left, rate); a list of 100 k run ids would not help.
      if (doctor && doctor.redispatched.length > 0)
        deps.logger.info({ redispatched: doctor.redispatched.length }, 'doctor re-dispatched lost work');
      return pass.more;
    },
    onError: (err) => deps.logger.warn({ err }, 'monitor sweep failed; it will try again'),
  });
  return {
    async stop() {
      await loop.stop();
      await releaseLease(deps.prisma, { name: 'monitor', holder }).catch(() => undefined);
    },
  };
}
