import type { Prisma, PrismaClient } from '../generated/prisma/client.ts';

/**
 * Runs one sweep batch in a transaction of its own with the sweep's time limit, not Prisma's 5 s
 * default: the wait for a connection, the transaction and (statement_timeout, local to it) each
 * statement are bounded by `timeoutMs`, so a slow batch rolls back whole instead of half-applying.
 */
export function inSweepTransaction<T>(
  prisma: PrismaClient,
  timeoutMs: number,
  work: (tx: Prisma.TransactionClient) => Promise<T>,
): Promise<T> {
  return prisma.$transaction(
    async (tx) => {
      await tx.$queryRaw`select set_config('statement_timeout', ${String(timeoutMs)}, true)`;
      return work(tx);
    },
    { maxWait: timeoutMs, timeout: timeoutMs },
  );
}
