import type { Prisma } from '../generated/prisma/client.ts';
import { isHeldUp } from '../process/process-deps.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { lockOpenRun } from '../store/lock-open-run.ts';
import { inSweepTransaction } from './in-sweep-transaction.ts';

/**
 * How long a monitor's transaction on one run waits for any other row another session holds (a step, a
 * child) once it has the run's own row: a worker's round holds its rows for milliseconds.
 */
export const monitorLockWaitMs = 1000;

/** What a sweep still waits for one held run's row once it spent its allowance (`sweeps.held_run_wait_ms`). */
export const monitorRunWaitFloorMs = 100;

/**
 * One sweep's allowance for waiting on the rows of runs other sessions hold (ADR 0135). A worker's round
 * holds a run's row for a moment (a replay's load, a claim, a job's claim), longer on a loaded machine:
 * the sweep waits for it rather than pass the run over and leave its deadline or its `owner_gone` to the
 * next pass. A row held for good (an operator's psql, a host's open transaction) must not stop the sweep:
 * the sweep spends `sweeps.held_run_wait_ms` in all, then {@link monitorRunWaitFloorMs} per run, as a bulk
 * repair does (ADR 0132).
 */
export class HeldRunWaits {
  private spentMs = 0;
  constructor(
    private readonly totalMs: number,
    private readonly floorMs = monitorRunWaitFloorMs,
  ) {}
  /** A sweep's allowance, as the engine's settings give it (`sweeps.held_run_wait_ms`). */
  static of(deps: RuntimeDeps): HeldRunWaits {
    return new HeldRunWaits(deps.config.sweeps.held_run_wait_ms);
  }
  /** How long the next run's row may be waited for. */
  next(): number {
    return Math.round(Math.max(this.floorMs, this.totalMs - this.spentMs));
  }
  spend(ms: number): void {
    this.spentMs += ms;
  }
}

/**
 * One run's transaction of a monitor sweep (expiry, `owner_gone`, a stuck reason's change, the doctor's
 * reclaim): the run's row is locked, waited for at most what `waits` allows (the sweep's allowance: a
 * worker's round lets go in a moment), and any other row is waited for at most {@link monitorLockWaitMs}.
 * A run still held past that is `held`: nothing is written, it is logged, and the sweep goes on to its next
 * run, whose deadline or stuck reason must not wait behind this one (review 58: one held overdue run kept
 * every replica's monitor from expiring anything or judging any step `owner_gone`). The next pass looks at
 * it again. `closed`: the run is not open any more.
 */
export async function onMonitoredRun<T>(
  deps: RuntimeDeps,
  what: string,
  runId: string,
  strength: 'key share' | 'no key update' | 'update',
  work: (tx: Prisma.TransactionClient) => Promise<T>,
  waits: HeldRunWaits = HeldRunWaits.of(deps),
): Promise<T | 'held' | 'closed'> {
  const runWaitMs = waits.next();
  const outcome = await inSweepTransaction(
    deps.prisma,
    deps.config.sweeps.transaction_timeout_ms,
    async (tx): Promise<T | 'held' | 'closed'> => {
      const started = performance.now();
      let open: boolean;
      try {
        open = await lockOpenRun(tx, runId, strength);
      } finally {
        waits.spend(performance.now() - started);
      }
      if (!open) return 'closed';
      if (runWaitMs !== monitorLockWaitMs)
        await tx.$queryRaw`select set_config('lock_timeout', ${String(monitorLockWaitMs)}, true)`;
      return work(tx);
    },
    { lock_timeout: String(runWaitMs) },
  ).catch((err: unknown) => {
    if (isHeldUp(err)) return 'held' as const;
    throw err;
  });
  if (outcome === 'held')
    deps.logger.info(
      { runId, waitedMs: runWaitMs },
      `${what}: run ${runId} is held by another session (an open transaction on its rows); passed over until the next pass`,
    );
  return outcome;
}
