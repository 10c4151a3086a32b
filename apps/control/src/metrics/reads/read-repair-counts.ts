import type { SqlReader } from './sql-reader.ts';

export interface RepairCount {
  command: string;
  outcome: string;
  count: number;
}

/**
 * Repairs by command and outcome. No code records a repair yet (issue 9, section 1): until the repair
 * API writes its audit rows, there is nothing to count and `sagaflow_repairs_total` has no series.
 * This is the one place to change when it does.
 */
export function readRepairCounts(_db: SqlReader): Promise<RepairCount[]> {
  return Promise.resolve([]);
}
