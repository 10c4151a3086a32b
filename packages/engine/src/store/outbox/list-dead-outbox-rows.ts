import { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../types.ts';
import type { DbOutboxRow } from './find-outbox-row.ts';

/**
 * The Dead outbox rows, the longest dead first (`available_at`, the time its last failure was counted,
 * then `id`), at most `limit`, of one destination and/or one source if given, after the `(available_at,
 * id)` key `after` if given (the next page); read-only. What an operator requeues after an outage (ADR
 * 0104). Read through the `(status, available_at)` index, or with a destination or a source through the
 * partial Dead-only `(destination | source_id, available_at, id)` index (ADR 0122).
 */
export async function listDeadOutboxRows(
  db: Db,
  {
    limit,
    destination,
    sourceId,
    after,
  }: {
    limit: number;
    destination?: string | undefined;
    sourceId?: string | undefined;
    after?: { availableAt: Date; id: string } | undefined;
  },
): Promise<(DbOutboxRow & { created_at: Date })[]> {
  return db.$queryRaw<(DbOutboxRow & { created_at: Date })[]>`
    select id::text as id, seq, message_id, source_kind, source_id, type, destination, status, attempts,
           available_at, last_error, created_at
      from "sagaflow"."outbox"
     where status = 'Dead'
       ${destination === undefined ? Prisma.empty : Prisma.sql`and destination = ${destination}`}
       ${sourceId === undefined ? Prisma.empty : Prisma.sql`and source_id = ${sourceId}`}
       ${after === undefined ? Prisma.empty : Prisma.sql`and (available_at, id) > (${after.availableAt}::timestamptz, ${after.id}::uuid)`}
     order by available_at, id
     limit ${limit}`;
}

/** How many Dead rows one source has (through the partial Dead-only source index, ADR 0122); read-only. */
export async function countSourceDeadOutbox(db: Db, sourceId: string): Promise<number> {
  const rows = await db.$queryRaw<{ n: number }[]>`
    select count(*)::int as n from "sagaflow"."outbox" where status = 'Dead' and source_id = ${sourceId}`;
  return rows[0]?.n ?? 0;
}
