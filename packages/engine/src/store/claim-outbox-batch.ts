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
 * 1. find each source's FIRST Pending row by a skip scan: one index probe for the next source with
 *    Pending rows, one into the partial index of Pending rows (`outbox_pending_source_id_seq_idx`)
 *    for its head; a cost per source, not a read of every Pending row (ADR 0026); take a transaction-scoped advisory lock on each source
 *    whose first row is due, oldest first (a source whose head waits for its backoff can publish
 *    nothing, so it must not take a slot from the others); try-lock: a source another publisher is
 *    claiming right now is skipped, not waited for;
 * 2. in a NEW statement (so a fresh snapshot, taken after any rival claim on those sources
 *    committed) claim, per locked source, up to its share of the batch (the batch over the locked
 *    sources, rounded up; the oldest rows fill the batch) from the front of its Pending rows,
 *    stopping at the first row that is not due: a row waiting for its backoff, or in flight under
 *    another claim, holds back the rows behind it. Each source reads only its share through
 *    the same index. The claim pushes `available_at` forward by the visibility timeout (the claim
 *    window) and counts the attempt. SKIP LOCKED keeps it off rows another statement locked.
 *
 * Returns the claimed rows in `seq` order (insertion order; see migration 0004).
 */
export async function claimOutboxBatch(
  db: Db,
  args: { now: Date; limit: number; visibilityTimeoutSeconds: number },
): Promise<DbOutboxMessage[]> {
  const locked = await db.$queryRaw<{ source_id: string }[]>`
    with recursive sources as (
      (select source_id from "sagaflow"."outbox" where status = 'Pending' order by source_id limit 1)
      union all
      select (select o.source_id from "sagaflow"."outbox" o
               where o.status = 'Pending' and o.source_id > sources.source_id
               order by o.source_id limit 1)
        from sources
       where sources.source_id is not null)
    select due.source_id
      from (select sources.source_id, head.seq
              from sources
              cross join lateral (select h.seq, h.available_at from "sagaflow"."outbox" h
                                   where h.status = 'Pending' and h.source_id = sources.source_id
                                   order by h.seq limit 1) head
             where head.available_at <= ${args.now}::timestamptz
             order by head.seq
             limit ${args.limit}::int) due
     where pg_try_advisory_xact_lock(hashtextextended('sagaflow.outbox:' || due.source_id, 0))`;
  if (locked.length === 0) return [];
  const sources = locked.map((row) => row.source_id);
  const share = Math.ceil(args.limit / sources.length);
  const rows = await db.$queryRaw<DbOutboxMessage[]>`
    update "sagaflow"."outbox" o
       set available_at = ${args.now}::timestamptz + make_interval(secs => ${args.visibilityTimeoutSeconds}::int),
           attempts = o.attempts + 1
     where o.id in (
       select id from "sagaflow"."outbox"
        where id in (
          select q.id
            from unnest(${sources}::text[]) s(source_id)
            cross join lateral (select p.id, p.seq,
                                       bool_and(p.available_at <= ${args.now}::timestamptz) over (order by p.seq) as clear
                                  from "sagaflow"."outbox" p
                                 where p.status = 'Pending' and p.source_id = s.source_id
                                 order by p.seq
                                 limit ${share}::int) q
           where q.clear
           order by q.seq
           limit ${args.limit}::int)
        for update skip locked)
    returning o.id::text as id, o.seq, o.message_id, o.source_kind, o.source_id, o.type, o.destination, o.payload,
              o.headers, o.attempts, o.created_at`;
  return rows.sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
}
