import type { Prisma } from '../generated/prisma/client.ts';
import type { RuntimeDeps } from './runtime-deps.ts';

/**
 * Runs one of a run's transactions (a replay's load, claim, outcome, park or finish) with the
 * worker's wait for a connection, `worker.transaction_wait_ms`, instead of Prisma's 2 s; the
 * transaction itself keeps Prisma's 5 s limit. When no connection came in
 * time (Prisma's P2028 "Unable to start a transaction", or the pool's own connection timeout), the
 * transaction never began and nothing of `work` ran, so it is started again, with a warning, for up
 * to the job's lease: a busy pool makes the run wait, it no longer fails the job and leaves the run
 * to wait out its lease (the bench's scale-out counted 12 such failures). Any other error is thrown.
 */
export async function inRunTransaction<T>(
  deps: RuntimeDeps,
  work: (tx: Prisma.TransactionClient) => Promise<T>,
): Promise<T> {
  const { transaction_wait_ms: waitMs, lease_seconds: leaseSeconds } = deps.config.worker;
  const startedAt = performance.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await deps.prisma.$transaction(work, { maxWait: waitMs });
    } catch (err) {
      const waitedMs = performance.now() - startedAt;
      if (!isNoConnectionInTime(err) || waitedMs >= leaseSeconds * 1_000) throw err;
      deps.logger.warn(
        { attempt, waitedMs: Math.round(waitedMs), transactionWaitMs: waitMs },
        'no database connection for a run transaction in time; waiting again',
      );
    }
  }
}

/** Prisma's and node-postgres's words for "the pool gave no connection in time"; causes are walked. */
const noConnectionText = /Unable to start a transaction in the given time|timeout exceeded when trying to connect/;

/** Did the transaction fail before it began, for want of a connection? */
export function isNoConnectionInTime(err: unknown, seen = new Set<unknown>()): boolean {
  if (typeof err !== 'object' || err === null || seen.has(err)) return false;
  seen.add(err);
  const e = err as { message?: unknown; cause?: unknown };
  if (typeof e.message === 'string' && noConnectionText.test(e.message)) return true;
  return isNoConnectionInTime(e.cause, seen);
}
