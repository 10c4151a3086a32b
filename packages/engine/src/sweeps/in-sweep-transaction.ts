import type { Prisma, PrismaClient } from '../generated/prisma/client.ts';

/**
 * Runs one sweep batch in a transaction of its own with the sweep's time limit, not Prisma's 5 s
 * default: the wait for a connection, the transaction and (statement_timeout, local to it) each
 * statement are bounded by `timeoutMs`, so a slow batch rolls back whole instead of half-applying.
 * `settings` are more settings local to the transaction (a planner switch the batch's statements
 * need), set in the same statement as the time limit: no round trip of their own, and nothing to
 * put back, since the transaction's end drops them.
 */
export function inSweepTransaction<T>(
  prisma: PrismaClient,
  timeoutMs: number,
  work: (tx: Prisma.TransactionClient) => Promise<T>,
  settings: Readonly<Record<string, string>> = {},
): Promise<T> {
  const names = ['statement_timeout', ...Object.keys(settings)];
  const values = [String(timeoutMs), ...Object.values(settings)];
  return prisma.$transaction(
    async (tx) => {
      await tx.$queryRaw`select set_config(s.name, s.value, true) from unnest(${names}::text[], ${values}::text[]) s(name, value)`;
      return work(tx);
    },
    { maxWait: timeoutMs, timeout: timeoutMs },
  );
}
