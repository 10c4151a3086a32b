import type { SqlReader } from './sql-reader.ts';

export interface RunCount {
  flow: string;
  status: string;
  count: number;
}

/** Runs by flow and status, terminal ones included (an index-only scan of (flow_name, status, updated_at)). */
export async function readRunCounts(db: SqlReader): Promise<RunCount[]> {
  return db.$queryRaw<RunCount[]>`
    select flow_name as flow, status, count(*)::int as count
      from "sagaflow"."flow_runs"
     group by flow_name, status
     order by flow_name, status`;
}
