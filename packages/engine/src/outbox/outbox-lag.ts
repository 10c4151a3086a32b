import type { Database } from '../db/database.ts';
import { systemClock, type Clock } from '../runtime/clock.ts';
import { readOutboxLag } from '../store/read-outbox-lag.ts';

export interface OutboxLag {
  /** Rows not yet acknowledged (due or waiting for a retry). */
  pending: number;
  /** Age of the oldest of them, from its creation; 0 when none. */
  oldestPendingAgeSeconds: number;
  /** Rows that used up their attempts; kept for operators. */
  dead: number;
}

/** The outbox figures for metrics and the console. */
export async function outboxLag(db: Pick<Database, 'prisma'>, options: { clock?: Clock } = {}): Promise<OutboxLag> {
  const { pending, dead, oldestPendingAt } = await readOutboxLag(db.prisma);
  const now = (options.clock ?? systemClock).now().getTime();
  const age = oldestPendingAt === null ? 0 : Math.max(0, (now - oldestPendingAt.getTime()) / 1000);
  return { pending, dead, oldestPendingAgeSeconds: age };
}
