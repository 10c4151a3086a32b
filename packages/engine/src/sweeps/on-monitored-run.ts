import type { Prisma } from '../generated/prisma/client.ts';
import { isHeldUp } from '../process/process-deps.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';
import { tryLockOpenRun } from '../store/try-lock-open-run.ts';
import { inSweepTransaction } from './in-sweep-transaction.ts';

/**
 * How long a monitor's transaction on one run waits for any other row another session holds (a step, a
 * child) once it has the run's own row: a worker's round holds its rows for milliseconds.
 */
export const monitorLockWaitMs = 1000;

/**
 * One run's transaction of a monitor sweep (expiry, `owner_gone`, a stuck reason's change, the doctor's
 * reclaim): the run's row is locked without waiting (`tryLockOpenRun`), and any other row is waited for
 * at most {@link monitorLockWaitMs}. A run another session holds is `held`: nothing is written, it is
 * logged, and the sweep goes on to its next run, whose deadline or stuck reason must not wait behind this
 * one (review 58: one held overdue run kept every replica's monitor from expiring anything or judging
 * any step `owner_gone`). The next pass looks at it again. `closed`: the run is not open any more.
 */
export async function onMonitoredRun<T>(
  deps: RuntimeDeps,
  what: string,
  runId: string,
  strength: 'key share' | 'no key update' | 'update',
  work: (tx: Prisma.TransactionClient) => Promise<T>,
): Promise<T | 'held' | 'closed'> {
  const outcome = await inSweepTransaction(
    deps.prisma,
    deps.config.sweeps.transaction_timeout_ms,
    async (tx): Promise<T | 'held' | 'closed'> => {
      const lock = await tryLockOpenRun(tx, runId, strength);
      return lock === 'locked' ? work(tx) : lock;
    },
    { lock_timeout: String(monitorLockWaitMs) },
  ).catch((err: unknown) => {
    if (isHeldUp(err)) return 'held' as const;
    throw err;
  });
  if (outcome === 'held')
    deps.logger.info(
      { runId },
      `${what}: run ${runId} is held by another session (an open transaction on its rows); passed over until the next pass`,
    );
  return outcome;
}
