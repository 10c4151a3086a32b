import type { Prisma } from '../generated/prisma/client.ts';
import { retryRolledBack } from '../db/retry-rolled-back.ts';
import { isHeldUp, limitTransaction, lockWaitMs, targetBusyError } from '../process/process-deps.ts';
import { waitingForConnection } from '../runtime/in-run-transaction.ts';

export { operatorStatement } from '../runtime/in-run-transaction.ts';
import type { RuntimeDeps } from '../runtime/runtime-deps.ts';

/**
 * The one transaction of an operator's command (terminate and each child it terminates, cancel,
 * signal, kick, reclaimStep). It waits for a pooled connection as a run's transactions do: for
 * `worker.transaction_wait_ms` instead of Prisma's 2 s, and again while none came, up to
 * `worker.lease_seconds` (a transaction that got no connection never began: nothing of it ran). It
 * runs again when PostgreSQL rolled it back to break a lock cycle (ADR 0074). Before, a busy pool
 * failed the command with Prisma's P2028 "Unable to start a transaction in the given time" while the
 * runs beside it waited (ADR 0078). Given `what`, it is bounded in the database as a repair is.
 */
export function inOperatorTransaction<T>(
  deps: RuntimeDeps,
  work: (tx: Prisma.TransactionClient) => Promise<T>,
  /**
   * The command and its target (`kick of run <id>`), for a command an operator (or a host for one) sends
   * to a run: its transaction is then bounded as a repair's is (ADR 0132 §1, review 58), and a row another
   * session holds past the lock wait fails it with `target_busy`, naming `what`. Without it the transaction
   * has Prisma's limits only (a terminate's batches after its commit, ADR 0126).
   */
  what?: string,
): Promise<T> {
  const maxWait = deps.config.worker.transaction_wait_ms;
  const limitMs = deps.config.processes.transaction_timeout_ms;
  const bounded =
    what === undefined
      ? work
      : async (tx: Prisma.TransactionClient) => {
          await limitTransaction(tx, limitMs);
          return work(tx);
        };
  const done = retryRolledBack(() =>
    waitingForConnection(
      deps,
      () => deps.prisma.$transaction(bounded, { maxWait }),
      'no database connection for an operator command in time; waiting again',
    ),
  );
  if (what === undefined) return done;
  return done.catch((err: unknown) => {
    if (!isHeldUp(err)) throw err;
    deps.logger.warn({ err }, `${what} not applied: another session held a row it needed past the lock wait`);
    throw targetBusyError(what, { lockWaitMs: lockWaitMs(limitMs), limitMs }, err);
  });
}
