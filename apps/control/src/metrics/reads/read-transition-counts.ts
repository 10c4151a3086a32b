import { countedTransition } from './counted-transitions.ts';
import type { SqlReader } from './sql-reader.ts';

export interface TransitionCount {
  process: string;
  from: string;
  to: string;
  count: number;
}

/**
 * Transitions ever made, by process and (from, to): applied ones and operator repairs, not messages
 * that were ignored or skipped, nor a release's audit row (countedTransition). A counter read from the history table, so it survives restarts;
 * each transition carries its process (ADR 0040), so no instance is read.
 */
export async function readTransitionCounts(db: SqlReader): Promise<TransitionCount[]> {
  return db.$queryRawUnsafe<TransitionCount[]>(
    `select t.process_name as process, t.from_state as "from", t.to_state as "to", count(*)::int as count
       from "sagaflow"."process_transitions" t
      where ${countedTransition('t')}
      group by t.process_name, t.from_state, t.to_state
      order by 1, 2, 3`,
  );
}
