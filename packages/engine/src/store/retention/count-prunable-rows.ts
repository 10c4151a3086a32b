import type { Db } from '../types.ts';
import type { RetentionRowCounts } from './retention-tables.ts';
import {
  prunableInboxWhere,
  prunableOutboxWhere,
  prunableRunsWhere,
  prunableTransitionsWhere,
  prunableWorkersWhere,
} from './prunable-sql.ts';

/** How many rows of each table a prune with this cutoff would delete now (a dry run's answer). */
export async function countPrunableRows(db: Db, args: { cutoff: Date }): Promise<RetentionRowCounts> {
  const rows = await db.$queryRaw<RetentionRowCounts[]>`
    with runs as (select r.id from "sagaflow"."flow_runs" r where ${prunableRunsWhere(args.cutoff)})
    select (select count(*) from runs)::int as flow_runs,
           (select count(*) from "sagaflow"."action_runs" where run_id in (select id from runs))::int as action_runs,
           (select count(*) from "sagaflow"."compensation_runs" where run_id in (select id from runs))::int as compensation_runs,
           (select count(*) from "sagaflow"."flow_events" where run_id in (select id from runs))::int as flow_events,
           (select count(*) from "sagaflow"."signals" where run_id in (select id from runs))::int as signals,
           (select count(*) from "sagaflow"."timers" where run_id in (select id from runs))::int as timers,
           (select count(*) from "sagaflow"."jobs" where run_id in (select id from runs))::int as jobs,
           (select count(*) from "sagaflow"."process_transitions" t where ${prunableTransitionsWhere(args.cutoff)})::int
             as process_transitions,
           (select count(*) from "sagaflow"."outbox" o where ${prunableOutboxWhere(args.cutoff)})::int as outbox,
           (select count(*) from "sagaflow"."inbox" m where ${prunableInboxWhere(args.cutoff)})::int as inbox,
           (select count(*) from "sagaflow"."workers" w where ${prunableWorkersWhere(args.cutoff)})::int as workers`;
  const counts = rows[0];
  if (!counts) throw new Error('count of prunable rows returned nothing');
  return counts;
}
