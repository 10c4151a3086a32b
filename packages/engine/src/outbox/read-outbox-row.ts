import type { Database } from '../db/database.ts';
import { isUuid } from '../input/assert-uuid.ts';
import { findOutboxRow, type DbOutboxRow } from '../store/outbox/find-outbox-row.ts';

/** One outbox row as an operator sees it: what, where, from which source, and how its sending went. */
export interface OutboxRowView {
  id: string;
  messageId: string;
  sourceKind: string;
  sourceId: string;
  type: string;
  destination: string;
  status: string;
  attempts: number;
  availableAt: string;
  lastError: string | null;
}

/**
 * Reads one outbox row by its id (null when there is none, or the id is not a uuid); read-only.
 * What a client drafts an `outbox.requeue` against: its status and attempts.
 *
 * @example
 * const row = await readOutboxRow(db, outboxId); // { status: 'Dead', attempts: 5, lastError: '...', ... }
 */
export async function readOutboxRow(db: Pick<Database, 'prisma'>, id: string): Promise<OutboxRowView | null> {
  if (!isUuid(id)) return null;
  const row = await findOutboxRow(db.prisma, id.toLowerCase(), { lock: false });
  return row ? toOutboxRowView(row) : null;
}

/** A stored outbox row as `OutboxRowView` shows it. */
export function toOutboxRowView(row: DbOutboxRow): OutboxRowView {
  return {
    id: row.id,
    messageId: row.message_id,
    sourceKind: row.source_kind,
    sourceId: row.source_id,
    type: row.type,
    destination: row.destination,
    status: row.status,
    attempts: row.attempts,
    availableAt: row.available_at.toISOString(),
    lastError: row.last_error,
  };
}
