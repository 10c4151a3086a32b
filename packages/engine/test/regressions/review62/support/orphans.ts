import type { Database } from '../../../../src/db/database.ts';
import { holding } from '../../../repairs/support/repair-fixtures.ts';

/** A worker id with no `workers` row: gone once its steps were claimed longer ago than `dead_after_seconds`. */
const GONE_WORKER = 'r62-gone-host:1:deadbeef';

/**
 * `count` open runs of `holding` (Waiting, `repairCount` re-dispatches spent), each with its step Running,
 * no reclaim deadline, claimed `goneMinutesAgo` minutes ago by a worker that has no row: orphaned steps as
 * a killed pool leaves them (ADR 0010). Returns the runs' ids.
 */
export async function seedOrphans(
  db: Database,
  args: { count: number; repairCount: number; goneMinutesAgo: number },
): Promise<string[]> {
  const rows = await db.prisma.$queryRaw<{ run_id: string }[]>`
    with runs as (
      insert into "sagaflow"."flow_runs" (flow_name, flow_version, status, input, repair_count, started_at)
      select ${holding.name}, 1, 'Waiting', 'null'::jsonb, ${args.repairCount}::int, now() - interval '2 hours'
        from generate_series(1, ${args.count}::int)
      returning id
    )
    insert into "sagaflow"."action_runs" (run_id, sequence, kind, name, status, input, attempts, claimed_by, started_at, updated_at)
    select id, 1, 'action', 'rep-held', 'Running', 'null'::jsonb, 1, ${GONE_WORKER},
           now() - make_interval(mins => ${args.goneMinutesAgo}::int), now() - make_interval(mins => ${args.goneMinutesAgo}::int)
      from runs
    returning run_id::text as run_id`;
  return rows.map((r) => r.run_id);
}
