import type { Prisma } from '../generated/prisma/client.ts';
import { retryRolledBack } from '../db/retry-rolled-back.ts';
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
 * runs beside it waited (ADR 0078).
 */
export function inOperatorTransaction<T>(
  deps: RuntimeDeps,
  work: (tx: Prisma.TransactionClient) => Promise<T>,
): Promise<T> {
  const maxWait = deps.config.worker.transaction_wait_ms;
  return retryRolledBack(() =>
    waitingForConnection(
      deps,
      () => deps.prisma.$transaction(work, { maxWait }),
      'no database connection for an operator command in time; waiting again',
    ),
  );
}
