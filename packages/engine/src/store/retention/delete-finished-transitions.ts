import { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../types.ts';
import { prunableTransitionsWhere } from './prunable-sql.ts';
import { toKeysetBatch, type KeysetBatch, type KeysetBatchRow, type TimeCursor } from './time-cursor.ts';

/**
 * Deletes up to `limit` transitions of instances finished before the cutoff, oldest first, walking
 * the `at` index from `after` (one statement: the batch commits whole or not at all). Rows locked by
 * a writer are skipped, not waited for.
 */
export async function deleteFinishedTransitions(
  db: Db,
  args: { cutoff: Date; limit: number; after: TimeCursor | null },
): Promise<KeysetBatch> {
  const from = args.after
    ? Prisma.sql`and t.at >= ${args.after.at}::timestamptz
                 and (t.at, t.id) > (${args.after.at}::timestamptz, ${args.after.key}::bigint)`
    : Prisma.empty;
  const rows = await db.$queryRaw<KeysetBatchRow[]>`
    with doomed as (
      select t.id from "sagaflow"."process_transitions" t
       where ${prunableTransitionsWhere(args.cutoff)} ${from}
       order by t.at, t.id
       limit ${args.limit}::int
       for update of t skip locked),
    gone as (
      delete from "sagaflow"."process_transitions" x using doomed d where x.id = d.id returning x.id, x.at)
    select count(*)::int as deleted, max(at) as last_at,
           (array_agg(id order by at desc, id desc))[1]::text as last_key
      from gone`;
  return toKeysetBatch(rows[0]);
}
