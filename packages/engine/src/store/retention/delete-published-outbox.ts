import type { Db } from '../types.ts';
import { prunableOutboxWhere } from './prunable-sql.ts';

/**
 * Deletes up to `limit` outbox rows published before the cutoff, oldest first, through the
 * `published_at` index; a row a publisher holds is skipped. Returns how many went.
 */
export async function deletePublishedOutbox(db: Db, args: { cutoff: Date; limit: number }): Promise<number> {
  return db.$executeRaw`
    with doomed as (
      select o.id from "sagaflow"."outbox" o
       where ${prunableOutboxWhere(args.cutoff)}
       order by o.published_at
       limit ${args.limit}::int
       for update of o skip locked)
    delete from "sagaflow"."outbox" x using doomed d where x.id = d.id`;
}
