import type { PrismaClient } from '../generated/prisma/client.ts';
import { inSweepTransaction } from '../sweeps/in-sweep-transaction.ts';
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
  /**
   * The end of this claim's window, as the claim wrote it to `available_at`: the claim's own mark.
   * The publisher's later failure and hand-back writes are conditional on it as well as on
   * `attempts`, which a hand-back or a requeue can bring back to a value an older claim held.
   */
  claimed_until: Date;
}

/**
 * Claims due outbox rows for one publisher, in per-source order, in a transaction of its own bounded
 * by `timeoutMs` (the sweeps' transaction limit):
 *
 * 1. pick the `limit` sources whose FIRST Pending row (their head) is due, oldest head first, and
 *    take a transaction-scoped advisory lock on each (try-lock: a source another publisher is
 *    claiming right now is skipped, not waited for). A source whose head waits for its backoff can
 *    publish nothing, so it must not take a slot from the others. The heads are found at the front of
 *    the Pending rows in `seq` order (`outbox_pending_seq_idx`, see pickDueSources); only when that
 *    front holds too few due heads does the claim walk every source (lockedHeadsBySkipScan);
 * 2. in a NEW statement (so a fresh snapshot, taken after any rival claim on those sources
 *    committed) claim, per locked source, up to its share of the batch (the batch over the locked
 *    sources, rounded up; the oldest rows fill the batch) from the front of its Pending rows,
 *    stopping at the first row that is not due: a row waiting for its backoff, or in flight under
 *    another claim, holds back the rows behind it. Each source reads only its share through
 *    `outbox_pending_source_id_seq_idx`. The claim pushes `available_at` forward by the visibility
 *    timeout (the claim window) and counts the attempt. SKIP LOCKED keeps it off rows another
 *    statement locked, and a source's rows behind one it could not lock are left too: a row another
 *    publisher still writes its result to (its claim window lapsed) holds back the rows behind it as
 *    a row in flight does, so a source is never published out of its order (review 29).
 *
 * Returns the claimed rows in `seq` order (insertion order; see migration 0004).
 *
 * The plans, whatever the statistics (ADR 0098's addendum). An outage downstream leaves thousands of
 * Pending rows in backoff at the FRONT of the queue, often before any ANALYZE has seen one Pending
 * row. With such statistics `status = 'Pending'` is estimated at exactly no row, so every read of
 * the Pending rows looks free, and `outbox_pending_seq_idx` (whose `seq` follows the heap, so its
 * heap reads cost nothing by that estimate) wins over `outbox_pending_source_id_seq_idx`: a
 * source's rows, its head, and the skip scan's next source were read by walking the whole queue in
 * `seq` order, filtered by source (0.96 M entries over the backlog test's six passes). So:
 * - a source's rows and its head are asked for as a range of the source index, `source_id >= s and
 *   source_id <= s` (the same rows as `= s`, but no equality that would make `source_id` a constant
 *   of the ordering), ordered by `(source_id, seq)`: an order only that index gives without a sort;
 * - the claim's statements run with `enable_sort` off, so the walk, which needs a sort to give that
 *   order (or the skip scan's order by `source_id`), is not taken while a path without one exists.
 *   No form of the predicate alone does it: with the status estimated at no row, the walk plus a sort
 *   of "one row" still costs less than the source index's estimated heap read. The sorts that remain
 *   (the batch in `seq` order, the front's heads) have no alternative and are kept;
 * - `jit` is off with it: the cost the planner adds to those remaining sorts would otherwise push
 *   every claim past `jit_above_cost` and compile it (measured on a loaded machine: 85 to 635 ms a
 *   statement, the backlog test's outbox case 18 s instead of 6).
 * Both are set local to the claim's transaction, in the statement that sets its time limit
 * (inSweepTransaction's settings), so they cost no round trip and end with the transaction, whose
 * only work is this claim.
 *
 * The window keeps its default frame: PostgreSQL's window aggregate reads one row past its current
 * row even with a ROWS frame (measured: two index entries for a share of one either way); through
 * the source index that row is the source's next, or the end of its range.
 */
export async function claimOutboxBatch(
  prisma: PrismaClient,
  args: { now: Date; limit: number; visibilityTimeoutSeconds: number; timeoutMs: number },
): Promise<DbOutboxMessage[]> {
  const rows = await inSweepTransaction(prisma, args.timeoutMs, (tx) => claimIn(tx, args), claimPlanner);
  return rows.sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
}

/** The planner switches the claim's statements run with (see claimOutboxBatch). */
const claimPlanner = { enable_sort: 'off', jit: 'off' } as const;

async function claimIn(
  db: Db,
  args: { now: Date; limit: number; visibilityTimeoutSeconds: number },
): Promise<DbOutboxMessage[]> {
  const sources = await pickDueSources(db, args);
  if (sources.length === 0) return [];
  const share = Math.ceil(args.limit / sources.length);
  return db.$queryRaw<DbOutboxMessage[]>`
    with candidate as (
      select q.id, q.seq, s.source_id
        from unnest(${sources}::text[]) s(source_id)
        cross join lateral (select p.id, p.seq,
                                   bool_and(p.available_at <= ${args.now}::timestamptz) over (order by p.source_id, p.seq) as clear
                              from "sagaflow"."outbox" p
                             where p.status = 'Pending' and p.source_id >= s.source_id and p.source_id <= s.source_id
                             order by p.source_id, p.seq
                             limit ${share}::int) q
       where q.clear
       order by q.seq
       limit ${args.limit}::int),
    locked as (
      select id from "sagaflow"."outbox" where id in (select id from candidate) for update skip locked),
    held_back as (
      select c.source_id, min(c.seq) as seq from candidate c
       where not exists (select 1 from locked l where l.id = c.id)
       group by c.source_id)
    update "sagaflow"."outbox" o
       set available_at = ${args.now}::timestamptz + make_interval(secs => ${args.visibilityTimeoutSeconds}::int),
           attempts = o.attempts + 1
      from candidate c
     where o.id = c.id
       and exists (select 1 from locked l where l.id = c.id)
       and not exists (select 1 from held_back h where h.source_id = c.source_id and h.seq < c.seq)
    returning o.id::text as id, o.seq, o.message_id, o.source_kind, o.source_id, o.type, o.destination, o.payload,
              o.headers, o.attempts, o.created_at, o.available_at as claimed_until`;
}

/** The front read covers `limit × 4` Pending rows: room for a batch of sources with a few rows queued each. */
const frontRowsPerSource = 4;

/**
 * The sources step 1 locks, oldest due head first. Every source with a row among the first W Pending
 * rows by `seq` has its head there too (a head is its source's lowest Pending `seq`), and any due head
 * beyond them is newer than all of those: so when the front holds `limit` due heads they are the
 * oldest `limit` of all, found in one range read of W rows however many sources wait. When it holds
 * fewer and is not the whole queue (a few sources with long queues, or heads in backoff at the
 * front), the skip scan over every source decides, as before ADR 0036.
 */
async function pickDueSources(db: Db, args: { now: Date; limit: number }): Promise<string[]> {
  const front = args.limit * frontRowsPerSource;
  const heads = await db.$queryRaw<{ source_id: string; due: boolean; scanned: number }[]>`
    with front as (
      select source_id, seq, available_at from "sagaflow"."outbox"
       where status = 'Pending' order by seq limit ${front}::int)
    select h.source_id, h.available_at <= ${args.now}::timestamptz as due, (select count(*)::int from front) as scanned
      from (select distinct on (source_id) source_id, seq, available_at from front order by source_id, seq) h
     order by h.seq`;
  const due = heads.filter((h) => h.due).slice(0, args.limit);
  const wholeQueue = (heads[0]?.scanned ?? 0) < front;
  if (due.length < args.limit && !wholeQueue) return lockedHeadsBySkipScan(db, args);
  if (due.length === 0) return [];
  const locked = await db.$queryRaw<{ source_id: string }[]>`
    select s.source_id from unnest(${due.map((h) => h.source_id)}::text[]) with ordinality s(source_id, n)
     where pg_try_advisory_xact_lock(hashtextextended('sagaflow.outbox:' || s.source_id, 0))
     order by s.n`;
  return locked.map((row) => row.source_id);
}

/**
 * Step 1 the long way: one index probe for the next source with Pending rows, one into
 * `outbox_pending_source_id_seq_idx` for its head; a cost per source with Pending rows (ADR 0026).
 * Both go through that index only because the claim runs with `enable_sort` off (see
 * claimOutboxBatch); the head is asked for as a range of it, like the claim's per-source read. A
 * backlog of many sources whose heads wait for their backoff is still read head by head: two
 * entries per such source per pass.
 */
async function lockedHeadsBySkipScan(db: Db, args: { now: Date; limit: number }): Promise<string[]> {
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
                                   where h.status = 'Pending' and h.source_id >= sources.source_id
                                     and h.source_id <= sources.source_id
                                   order by h.source_id, h.seq limit 1) head
             where head.available_at <= ${args.now}::timestamptz
             order by head.seq
             limit ${args.limit}::int) due
     where pg_try_advisory_xact_lock(hashtextextended('sagaflow.outbox:' || due.source_id, 0))`;
  return locked.map((row) => row.source_id);
}
