import type { SqlReader } from './sql-reader.ts';

export interface TransitionCount {
  process: string;
  from: string;
  to: string;
  count: number;
}

/**
 * Transitions ever made, by process and (from, to): applied ones and operator repairs, not messages
 * that were ignored or skipped. A counter read from the history table, so it survives restarts.
 */
export async function readTransitionCounts(db: SqlReader): Promise<TransitionCount[]> {
  return db.$queryRaw<TransitionCount[]>`
    select i.process_name as process, t.from_state as "from", t.to_state as "to", count(*)::int as count
      from "sagaflow"."process_transitions" t
      join "sagaflow"."saga_instances" i on i.id = t.instance_id
     where t.outcome in ('applied', 'repair')
     group by i.process_name, t.from_state, t.to_state
     order by 1, 2, 3`;
}
