import type { SqlReader } from './sql-reader.ts';

export interface AnomalyCount {
  code: string;
  count: number;
}

/** Every anomaly ever journaled, by code: a counter that survives restarts (index-only scan of (code, at)). */
export async function readAnomalyCounts(db: SqlReader): Promise<AnomalyCount[]> {
  return db.$queryRaw<AnomalyCount[]>`
    select code, count(*)::int as count from "sagaflow"."anomaly_log" group by code order by code`;
}
