import { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../types.ts';
import type { DbOutboxRow } from './find-outbox-row.ts';

/**
 * The Dead outbox rows, the longest dead first (`available_at`, the time its last failure was counted,
 * then `id`), at most `limit`, of one destination if given; read-only, through the `(status,
 * available_at)` index. What an operator requeues after an outage (ADR 0104).
 */
export async function listDeadOutboxRows(
  db: Db,
  { limit, destination }: { limit: number; destination?: string | undefined },
): Promise<(DbOutboxRow & { created_at: Date })[]> {
  return db.$queryRaw<(DbOutboxRow & { created_at: Date })[]>`
    select id::text as id, seq, message_id, source_kind, source_id, type, destination, status, attempts,
           available_at, last_error, created_at
      from "sagaflow"."outbox"
     where status = 'Dead'
       ${destination === undefined ? Prisma.empty : Prisma.sql`and destination = ${destination}`}
     order by available_at, id
     limit ${limit}`;
}
