import type { Db } from './types.ts';

export interface DbSourceOutboxRow {
  id: string;
  seq: bigint;
  message_id: string;
  type: string;
  destination: string;
  status: string;
  attempts: number;
  available_at: Date;
  last_error: string | null;
  created_at: Date;
  published_at: Date | null;
}

/** The outbox rows one instance or run emitted, newest first (payloads left out: a page shows what and where). */
export async function listSourceOutbox(db: Db, sourceId: string, limit: number): Promise<DbSourceOutboxRow[]> {
  return db.$queryRaw<DbSourceOutboxRow[]>`
    select id::text as id, seq, message_id, type, destination, status, attempts, available_at, last_error, created_at, published_at
      from "sagaflow"."outbox"
     where source_id = ${sourceId}
     order by seq desc
     limit ${limit}`;
}
