import type { Db } from './types.ts';

export interface DbOutboxMessage {
  id: string;
  /** Insertion order; a source's rows are published in it. */
  seq: bigint;
  message_id: string;
  source_kind: string;
  source_id: string;
  type: string;
  destination: string;
  payload: unknown;
  headers: unknown;
  attempts: number;
  created_at: Date;
}

/**
 * Claims due outbox rows for one publisher, in per-source order. Must run inside a transaction:
 *
 * 1. take a transaction-scoped advisory lock on each source whose FIRST Pending row is due (a source
 *    whose head waits for its backoff can publish nothing, so it must not take a slot from the
 *    others); try-lock: a source another publisher is claiming right now is skipped, not waited for;
 * 2. in a NEW statement (so a fresh snapshot, taken after any rival claim on those sources
 *    committed) claim the rows of the locked sources whose every earlier Pending row of the same
 *    source is due too: a row waiting for its backoff, or in flight under another claim, holds back
 *    the rows behind it. The claim pushes `available_at` forward by the visibility timeout (the
 *    claim window) and counts the attempt. SKIP LOCKED keeps it off rows another statement locked.
 *
 * Returns the claimed rows in `seq` order (insertion order; see migration 0004).
 */
export async function claimOutboxBatch(
  db: Db,
  args: { now: Date; limit: number; visibilityTimeoutSeconds: number },
): Promise<DbOutboxMessage[]> {
  const locked = await db.$queryRaw<{ source_id: string }[]>`
    select due.source_id
      from (select head.source_id, head.seq
              from (select distinct on (source_id) source_id, seq, available_at
                      from "sagaflow"."outbox"
                     where status = 'Pending'
                     order by source_id, seq) head
             where head.available_at <= ${args.now}::timestamptz
             order by head.seq
             limit ${args.limit}::int) due
     where pg_try_advisory_xact_lock(hashtextextended('sagaflow.outbox:' || due.source_id, 0))`;
  if (locked.length === 0) return [];
  const sources = locked.map((row) => row.source_id);
  const rows = await db.$queryRaw<DbOutboxMessage[]>`
    update "sagaflow"."outbox" o
       set available_at = ${args.now}::timestamptz + make_interval(secs => ${args.visibilityTimeoutSeconds}::int),
           attempts = o.attempts + 1
     where o.id in (
       select id from "sagaflow"."outbox"
        where id in (
          select q.id
            from (select id, seq,
                         bool_and(available_at <= ${args.now}::timestamptz)
                           over (partition by source_id order by seq) as clear
                    from "sagaflow"."outbox"
                   where status = 'Pending' and source_id = any(${sources}::text[])) q
           where q.clear
           order by q.seq
           limit ${args.limit}::int)
        for update skip locked)
    returning o.id::text as id, o.seq, o.message_id, o.source_kind, o.source_id, o.type, o.destination, o.payload,
              o.headers, o.attempts, o.created_at`;
  return rows.sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
}
