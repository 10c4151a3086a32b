import type { Database } from '../db/database.ts';
import { listDeadOutboxRows } from '../store/outbox/list-dead-outbox-rows.ts';
import { toOutboxRowView, type OutboxRowView } from './read-outbox-row.ts';

/** The most Dead rows one read returns. */
export const maxDeadOutboxRows = 500;

/**
 * The Dead outbox rows, the longest dead first (at most `limit`, of one destination if given), each as
 * `readOutboxRow` shows one: what a bulk `outbox.requeue` is drafted against (ADR 0104); read-only.
 *
 * @example
 * const dead = await listDeadOutbox(db, { limit: 100, destination: 'demo.inventory' });
 */
export async function listDeadOutbox(
  db: Pick<Database, 'prisma'>,
  { limit, destination }: { limit: number; destination?: string | undefined },
): Promise<(OutboxRowView & { createdAt: string })[]> {
  const n = Math.max(1, Math.min(maxDeadOutboxRows, Math.trunc(limit)));
  const rows = await listDeadOutboxRows(db.prisma, { limit: n, destination });
  return rows.map((row) => ({ ...toOutboxRowView(row), createdAt: row.created_at.toISOString() }));
}
