import { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../types.ts';
import { prunableInboxWhere } from './prunable-sql.ts';
import { toKeysetBatch, type KeysetBatch, type KeysetBatchRow, type TimeCursor } from './time-cursor.ts';

/**
 * Deletes up to `limit` inbox records received before the cutoff (see prunableInboxWhere), oldest
 * first, walking the `received_at` index from `after`; the key is the record's JSON [consumer,
 * message_id]. One statement: the batch commits whole or not at all.
 */
export async function deleteOldInbox(
  db: Db,
  args: { cutoff: Date; limit: number; after: TimeCursor | null },
): Promise<KeysetBatch> {
  const [consumer, messageId] = args.after ? (JSON.parse(args.after.key) as [string, string]) : ['', ''];
  const from = args.after
    ? Prisma.sql`and m.received_at >= ${args.after.at}::timestamptz
                 and (m.received_at, m.consumer, m.message_id) > (${args.after.at}::timestamptz, ${consumer}, ${messageId})`
    : Prisma.empty;
  const rows = await db.$queryRaw<KeysetBatchRow[]>`
    with doomed as (
      select m.consumer, m.message_id from "sagaflow"."inbox" m
       where ${prunableInboxWhere(args.cutoff)} ${from}
       order by m.received_at, m.consumer, m.message_id
       limit ${args.limit}::int
       for update of m skip locked),
    gone as (
      delete from "sagaflow"."inbox" x using doomed d
       where x.consumer = d.consumer and x.message_id = d.message_id
      returning x.consumer, x.message_id, x.received_at)
    select count(*)::int as deleted, max(received_at) as last_at,
           (array_agg(json_build_array(consumer, message_id)::text
                      order by received_at desc, consumer desc, message_id desc))[1] as last_key
      from gone`;
  return toKeysetBatch(rows[0]);
}
