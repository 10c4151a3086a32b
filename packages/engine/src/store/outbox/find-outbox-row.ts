import { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../types.ts';

/** One outbox row as a repair reads it (the payload left out: a repair never changes what was written). */
export interface DbOutboxRow {
  id: string;
  seq: bigint;
  message_id: string;
  source_kind: string;
  source_id: string;
  type: string;
  destination: string;
  status: 'Pending' | 'Published' | 'Dead';
  attempts: number;
  available_at: Date;
  last_error: string | null;
}

/**
 * Reads an outbox row and, with `lock`, locks it until the transaction ends (`for update`). Every
 * write of the publisher to a row (the claim's `for update skip locked`, the Published mark, a
 * failure, a hand-back) takes the same row lock, so none commits between a repair's check of the
 * row's status and attempts and the repair's commit; a claim skips the row rather than wait for it.
 */
export async function findOutboxRow(db: Db, id: string, { lock }: { lock: boolean }): Promise<DbOutboxRow | null> {
  const rows = await db.$queryRaw<DbOutboxRow[]>`
    select id::text as id, seq, message_id, source_kind, source_id, type, destination, status, attempts,
           available_at, last_error
      from "sagaflow"."outbox"
     where id = ${id}::uuid
       ${lock ? Prisma.sql`for update` : Prisma.empty}`;
  return rows[0] ?? null;
}
