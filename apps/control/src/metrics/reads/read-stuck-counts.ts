import { openRunStatuses } from '@sagaflow/engine';
import type { SqlReader } from './sql-reader.ts';

export interface StuckCount {
  /** The kind of reason: the text before the first ':' of `stuck_reason` (replay_blocked, unknown_flow, ...). */
  reason: string;
  count: number;
}

/**
 * Stuck runs by kind of reason. Only open runs carry a `stuck_reason` (finishing clears it), so the
 * read is a range scan of the open statuses in the (status, updated_at) index: it costs what is in
 * flight, not the history. (No index on the reason itself: its text has no length bound.)
 */
export async function readStuckCounts(db: SqlReader): Promise<StuckCount[]> {
  return db.$queryRaw<StuckCount[]>`
    select split_part(stuck_reason, ':', 1) as reason, count(*)::int as count
      from "sagaflow"."flow_runs"
     where status = any(${[...openRunStatuses]}::text[]) and stuck_reason is not null
     group by 1
     order by 1`;
}
