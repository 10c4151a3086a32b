import { openRunStatuses, terminalRunStatuses } from '@sagaflow/engine';
import type { SqlReader } from '../../metrics/reads/sql-reader.ts';

export interface RunStatusCount {
  status: string;
  count: number;
  /** False when `count` is an estimate: more than `exactRunCountLimit` runs have this status. */
  exact: boolean;
}

/** Up to this many runs per status the overview counts one by one; beyond, it estimates (ADR 0036). */
export const exactRunCountLimit = 1000;

const statuses = [...openRunStatuses, ...terminalRunStatuses];

/**
 * Runs per status for the overview. Each status is counted over at most `exactRunCountLimit + 1`
 * entries of the (status, updated_at) index, so a count is exact while small (the open statuses, the
 * ones someone acts on, usually are). A status past the limit gets the planner's estimate instead
 * (readStatusEstimates), never less than the limit it is known to exceed, and `exact: false`: at a
 * million runs, counting the finished ones one by one cost 60 ms of every overview refresh (ADR
 * 0032's bench), and their exact totals are /metrics'.
 */
export async function readRunStatusCounts(db: SqlReader): Promise<RunStatusCount[]> {
  const rows = await db.$queryRaw<{ status: string; count: number }[]>`
    select s.status,
           (select count(*)::int
              from (select 1 from "sagaflow"."flow_runs" r where r.status = s.status
                    limit ${exactRunCountLimit + 1}::int) capped) as count
      from unnest(${statuses}::text[]) as s(status)`;
  const over = rows.filter((r) => r.count > exactRunCountLimit);
  const estimates = over.length > 0 ? await readStatusEstimates(db) : new Map<string, number>();
  return rows.map((r) =>
    r.count > exactRunCountLimit
      ? { status: r.status, count: Math.max(exactRunCountLimit + 1, estimates.get(r.status) ?? 0), exact: false }
      : { status: r.status, count: r.count, exact: true },
  );
}

/**
 * Runs per status as the planner sees them: the status's share among the sampled rows (pg_stats'
 * most common values) times the table's row count from its last ANALYZE, scaled to its size on disk
 * now, as the planner scales it. Empty when the table was never analyzed (a new embedded database).
 */
async function readStatusEstimates(db: SqlReader): Promise<Map<string, number>> {
  const rows = await db.$queryRaw<{ status: string; estimate: number }[]>`
    select v.status,
           round(v.share * c.reltuples
                 * (pg_relation_size(c.oid) / current_setting('block_size')::float8 / greatest(c.relpages, 1)))::float8
             as estimate
      from pg_class c
      join pg_stats s on s.schemaname = 'sagaflow' and s.tablename = 'flow_runs' and s.attname = 'status'
      cross join lateral unnest(s.most_common_vals::text::text[], s.most_common_freqs) as v(status, share)
     where c.oid = '"sagaflow"."flow_runs"'::regclass and c.reltuples > 0 and c.relpages > 0`;
  return new Map(rows.map((r) => [r.status, r.estimate]));
}
