import type { SqlReader } from './sql-reader.ts';

export interface RepairCount {
  command: string;
  outcome: string;
  count: number;
}

/**
 * Repairs by command and outcome (applied, conflict, refused), from the engine's repair audit table
 * (ADR 0016): a counter that survives restarts, read through its (command, status, at) index.
 */
export async function readRepairCounts(db: SqlReader): Promise<RepairCount[]> {
  return db.$queryRaw<RepairCount[]>`
    select command, status as outcome, count(*)::int as count from "sagaflow"."repair_commands"
     group by command, status order by command, status`;
}
