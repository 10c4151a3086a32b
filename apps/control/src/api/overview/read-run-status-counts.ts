import { openRunStatuses, terminalRunStatuses } from '@sagaflow/engine';
import type { SqlReader } from '../../metrics/reads/sql-reader.ts';
import { countCap } from '../lists/page-cursor.ts';

export interface RunStatusCount {
  status: string;
  /** Exact up to `countCap`; `countCap` means at least that many. */
  count: number;
}

const statuses = [...openRunStatuses, ...terminalRunStatuses];

/**
 * Runs per status for the overview, each counted over at most `countCap + 1` entries of the
 * (status, created_at, id) index, as the lists count (ADR 0018). A count of every run grouped by
 * status reads the whole table on every refresh (a sequential scan of a million rows, ADR 0032);
 * the overview's business is what needs attention, and exact history totals are /metrics'.
 */
export async function readRunStatusCounts(db: SqlReader): Promise<RunStatusCount[]> {
  const rows = await db.$queryRaw<RunStatusCount[]>`
    select s.status,
           (select count(*)::int
              from (select 1 from "sagaflow"."flow_runs" r where r.status = s.status limit ${countCap + 1}::int) capped) as count
      from unnest(${statuses}::text[]) as s(status)`;
  return rows.map((r) => ({ status: r.status, count: Math.min(r.count, countCap) }));
}
