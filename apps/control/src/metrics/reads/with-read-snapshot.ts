import type { Database } from '@sagaflow/engine';
import type { SqlReader } from './sql-reader.ts';

/**
 * Runs `read` in ONE read-only REPEATABLE READ transaction, so every figure it reads comes from the
 * same snapshot (a run counted Completed is not also counted stuck), under a statement_timeout so a
 * slow database fails the read fast instead of piling up connections. `jit: false` keeps the planner
 * from compiling reads whose estimated cost is high but whose run is short (ADR 0036's charts).
 */
export async function withReadSnapshot<T>(
  db: Pick<Database, 'prisma'>,
  timeoutMs: number,
  read: (tx: SqlReader) => Promise<T>,
  options: { jit?: boolean } = {},
): Promise<T> {
  const ms = Math.max(1, Math.floor(timeoutMs));
  return db.prisma.$transaction(
    async (tx) => {
      await tx.$executeRawUnsafe('set transaction read only');
      // An integer we computed, never input: SET takes no bind parameters.
      await tx.$executeRawUnsafe(`set local statement_timeout = ${ms}`);
      if (options.jit === false) await tx.$executeRawUnsafe('set local jit = off');
      return read(tx);
    },
    { isolationLevel: 'RepeatableRead', maxWait: ms, timeout: ms + 1000 },
  );
}
