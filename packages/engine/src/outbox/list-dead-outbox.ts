import type { Database } from '../db/database.ts';
import { EngineError } from '../errors/engine-error.ts';
import { isUuid } from '../input/assert-uuid.ts';
import { listDeadOutboxRows } from '../store/outbox/list-dead-outbox-rows.ts';
import { toOutboxRowView, type OutboxRowView } from './read-outbox-row.ts';

/** The most Dead rows one read returns. */
export const maxDeadOutboxRows = 500;

/**
 * The Dead outbox rows, the longest dead first (at most `limit`, of one destination and/or one instance
 * or run (`instanceId`, the rows' source) if given), each as `readOutboxRow` shows one: what a bulk
 * `outbox.requeue` is drafted against (ADR 0104); read-only. `after` (the `availableAt` and `id` of the
 * last row of a page) reads the next page: every Dead row of an instance is found however many there
 * are (ADR 0122).
 *
 * @example
 * const dead = await listDeadOutbox(db, { limit: 100, destination: 'demo.inventory' });
 * const next = await listDeadOutbox(db, { limit: 100, destination: 'demo.inventory', after: dead.at(-1) });
 */
export async function listDeadOutbox(
  db: Pick<Database, 'prisma'>,
  {
    limit,
    destination,
    instanceId,
    after,
  }: {
    limit: number;
    destination?: string | undefined;
    instanceId?: string | undefined;
    after?: { availableAt: string; id: string } | undefined;
  },
): Promise<(OutboxRowView & { createdAt: string })[]> {
  const n = Math.max(1, Math.min(maxDeadOutboxRows, Math.trunc(limit)));
  // Lower case, as the engine keeps ids (ADR 0102); an id that is no uuid is no source's.
  if (instanceId !== undefined && !isUuid(instanceId)) return [];
  let key: { availableAt: Date; id: string } | undefined;
  if (after !== undefined) {
    const at = new Date(after.availableAt);
    if (Number.isNaN(at.getTime()) || !isUuid(after.id))
      throw new EngineError('invalid_input', 'after: must be the availableAt and id of a Dead row', {
        field: 'after',
      });
    key = { availableAt: at, id: after.id.toLowerCase() };
  }
  const rows = await listDeadOutboxRows(db.prisma, {
    limit: n,
    destination,
    sourceId: instanceId?.toLowerCase(),
    after: key,
  });
  return rows.map((row) => ({ ...toOutboxRowView(row), createdAt: row.created_at.toISOString() }));
}
