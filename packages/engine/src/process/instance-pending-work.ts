import type { Database } from '../db/database.ts';
import { isUuid } from '../input/assert-uuid.ts';
import { listInstanceTimeouts } from '../store/list-instance-timeouts.ts';
import { listSourceOutbox, type DbSourceOutboxRow } from '../store/list-source-outbox.ts';
import { countSourceDeadOutbox, listDeadOutboxRows } from '../store/outbox/list-dead-outbox-rows.ts';
import { maxDeadOutboxRows } from '../outbox/list-dead-outbox.ts';

/** What an instance still has in flight: its pending timeouts and the outbox rows it emitted. */
export interface InstancePendingWork {
  /** Pending timeouts, soonest first: each fires only if the instance is still in `expectedState`. */
  timeouts: {
    id: string;
    name: string;
    expectedState: string;
    dueAt: string;
    attempts: number;
    lastError: string | null;
    retryAt: string | null;
  }[];
  /**
   * Its outbox rows, newest first: the newest `limit` (Pending, Published or Dead), then its older Dead
   * rows (up to 500, the longest dead), so that a Dead row, which needs a person, is never hidden behind
   * later rows (ADR 0122).
   */
  outbox: {
    /** The row's id: what a repair (outbox.requeue) names. */
    id: string;
    messageId: string;
    type: string;
    destination: string;
    status: string;
    attempts: number;
    availableAt: string;
    lastError: string | null;
    createdAt: string;
    publishedAt: string | null;
  }[];
  /** True when the instance has rows older than the newest `limit` that are not listed (none of them Dead, unless `deadOutboxNotListed`). */
  outboxTruncated: boolean;
  /** How many of its Dead rows `outbox` does not list (more than 500 older Dead rows); 0 almost always. */
  deadOutboxNotListed: number;
}

/** Reads an instance's pending timeouts and its outbox rows for the console's instance page; read-only. */
export async function instancePendingWork(
  db: Pick<Database, 'prisma'>,
  instanceId: string,
  options: { limit?: number } = {},
): Promise<InstancePendingWork> {
  if (!isUuid(instanceId)) return { timeouts: [], outbox: [], outboxTruncated: false, deadOutboxNotListed: 0 };
  // Lower case, as the engine keeps ids (ADR 0102): the outbox's source_id is text, so an id given in
  // upper case matched none of the instance's rows (review 39).
  const id = instanceId.toLowerCase();
  const limit = Math.min(Math.max(Math.trunc(options.limit ?? 100), 1), 500);
  const [timeouts, newest] = await Promise.all([
    listInstanceTimeouts(db.prisma, id, limit),
    listSourceOutbox(db.prisma, id, limit + 1),
  ]);
  const outboxTruncated = newest.length > limit;
  const outbox: DbSourceOutboxRow[] = newest.slice(0, limit);
  let deadOutboxNotListed = 0;
  if (outboxTruncated) {
    // Rows older than the page exist: its Dead ones are listed after it, whatever their age (review 48).
    const deadInPage = outbox.filter((o) => o.status === 'Dead').length;
    const dead = await countSourceDeadOutbox(db.prisma, id);
    if (dead > deadInPage) {
      const shown = new Set(outbox.map((o) => o.id));
      const older = (await listDeadOutboxRows(db.prisma, { limit: maxDeadOutboxRows, sourceId: id }))
        .filter((o) => !shown.has(o.id))
        .sort((a, b) => (a.seq > b.seq ? -1 : a.seq < b.seq ? 1 : 0));
      outbox.push(...older.map((o) => ({ ...o, published_at: null })));
      deadOutboxNotListed = Math.max(0, dead - deadInPage - older.length);
    }
  }
  return {
    timeouts: timeouts.map((t) => ({
      id: t.id,
      name: t.name,
      expectedState: t.expected_state,
      dueAt: t.due_at.toISOString(),
      attempts: t.attempts,
      lastError: t.last_error,
      retryAt: t.retry_at?.toISOString() ?? null,
    })),
    outbox: outbox.map((o) => ({
      id: o.id,
      messageId: o.message_id,
      type: o.type,
      destination: o.destination,
      status: o.status,
      attempts: o.attempts,
      availableAt: o.available_at.toISOString(),
      lastError: o.last_error,
      createdAt: o.created_at.toISOString(),
      publishedAt: o.published_at?.toISOString() ?? null,
    })),
    outboxTruncated,
    deadOutboxNotListed,
  };
}
