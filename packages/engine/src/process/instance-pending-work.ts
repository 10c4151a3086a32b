import type { Database } from '../db/database.ts';
import { isUuid } from '../input/assert-uuid.ts';
import { listInstanceTimeouts } from '../store/list-instance-timeouts.ts';
import { listSourceOutbox } from '../store/list-source-outbox.ts';

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
  /** Its outbox rows, newest first (at most `limit`): Pending, Published or Dead. */
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
}

/** Reads an instance's pending timeouts and its outbox rows for the console's instance page; read-only. */
export async function instancePendingWork(
  db: Pick<Database, 'prisma'>,
  instanceId: string,
  options: { limit?: number } = {},
): Promise<InstancePendingWork> {
  if (!isUuid(instanceId)) return { timeouts: [], outbox: [] };
  // Lower case, as the engine keeps ids (ADR 0102): the outbox's source_id is text, so an id given in
  // upper case matched none of the instance's rows (review 39).
  const id = instanceId.toLowerCase();
  const limit = Math.min(Math.max(Math.trunc(options.limit ?? 100), 1), 500);
  const [timeouts, outbox] = await Promise.all([
    listInstanceTimeouts(db.prisma, id, limit),
    listSourceOutbox(db.prisma, id, limit),
  ]);
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
  };
}
