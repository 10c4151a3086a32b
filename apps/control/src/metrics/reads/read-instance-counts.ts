import type { SqlReader } from './sql-reader.ts';

export interface InstanceCount {
  process: string;
  /** The process's own state name (current_state). */
  state: string;
  /** ACTIVE or QUARANTINED: completed instances are history, not load. */
  status: string;
  count: number;
  /** The least recently updated instance's `updated_at`: how long the stalest one has not moved. */
  stalestUpdatedAt: Date;
}

/**
 * Open process instances (ACTIVE and QUARANTINED) by process, state and status, with the stalest
 * one's last update (seed 002: stalest first; a quarantined instance's updated_at stops when it was
 * quarantined). A range scan of (status, updated_at): completed instances are never read.
 */
export async function readInstanceCounts(db: SqlReader): Promise<InstanceCount[]> {
  return db.$queryRaw<InstanceCount[]>`
    select process_name as process, current_state as state, status, count(*)::int as count,
           min(updated_at) as "stalestUpdatedAt"
      from "sagaflow"."saga_instances"
     where status in ('ACTIVE', 'QUARANTINED')
     group by process_name, current_state, status
     order by process_name, current_state, status`;
}
