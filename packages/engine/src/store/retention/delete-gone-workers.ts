import type { Db } from '../types.ts';
import { prunableWorkersWhere } from './prunable-sql.ts';

/**
 * Deletes up to `limit` rows of worker pools gone before the cutoff, longest gone first; a row a beat or
 * a stop holds is skipped. Returns how many went.
 */
export async function deleteGoneWorkers(db: Db, args: { cutoff: Date; limit: number }): Promise<number> {
  return db.$executeRaw`
    with doomed as (
      select w.id from "sagaflow"."workers" w
       where ${prunableWorkersWhere(args.cutoff)}
       order by coalesce(w.stopped_at, w.heartbeat_at)
       limit ${args.limit}::int
       for update of w skip locked)
    delete from "sagaflow"."workers" x using doomed d where x.id = d.id`;
}
